#include "comparison/comparison_bench.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <type_traits>

#include <unistd.h>

#include "common/aligned_allocator.h"
#include "comparison/peer_libraries.h"
#include "comparison/summary_reporter.h"
#include "kernels/default_config.h"
#include "kernels/epilogue.h"
#include "kernels/gemm.h"
#include "kernels/reference_gemm.h"
#include "machine/roofline.h"
#include "mmtune/runtime.h"

namespace mmtune {
namespace {

// Random operand values: floating ones in [-1, 1) (rounded for bf16); s8 over its whole range
// and u8 in [0, 128), so that a peer that sums pairs of u8 x s8 products in saturating 16 bits
// (oneDNN's AVX2 path) stays exact and is timed, not rejected.
template <typename T>
T RandomElement(std::mt19937& rng) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return ToBFloat16(RandomElement<float>(rng));
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return static_cast<std::uint8_t>(rng() % 128);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(rng());
  } else {
    return static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
  }
}

double ToDouble(BFloat16 value) { return ToFloat(value); }
template <typename T>
double ToDouble(T value) {
  return static_cast<double>(value);
}

// What a row computes beyond the GEMM, and so what its result is checked against.
enum class Applies { kNothing, kEpilogue, kDequantization };

// The operands of one problem, shared by every implementation of it: row-major NN, tight leading
// dimensions; `items` of each, one after another, for a batch.
// With an epilogue, its bias (N values: floating ones in [-1, 1), integers in [-1000, 1000]).
// Dequantized (s8 only): C's storage holds f32 results, scale_j * (A B)(i, j) + bias_j then the
// activation, with A's scale and a scale per column of B (A without a zero point), the bias f32.
// A, B and C start on pages, as aligned allocators give them. The tuner also times every config
// on operands 16 bytes past a page, malloc's placement (tuner/problem_buffers.h).
template <typename T>
using PageAligned = std::vector<T, AlignedAllocator<T, 4096>>;

template <class Kind>
struct Operands {
  using C = typename GemmTypes<Kind>::C;
  PageAligned<typename GemmTypes<Kind>::A> a;
  PageAligned<typename GemmTypes<Kind>::B> b;
  PageAligned<C> c;
  std::vector<C> bias;
  Epilogue<C> epilogue;
  std::int64_t items = 1;
  // Dequantized: the runtime's Dequantization and epilogue, and the same as the plan's
  // per-column scales (A's scale times B's) and offsets (none).
  bool dequantized = false;
  std::vector<float> b_scales, column_scales, float_bias;
  std::vector<std::int32_t> column_offsets;
  Dequantization dequantization;
  Epilogue<float> float_epilogue;
  DequantizeToF32 dequantize;
  Operands(const Problem& p, std::int64_t batch_items, bool with_bias, Activation activation,
           bool dequantize_to_f32)
      : items(batch_items), dequantized(dequantize_to_f32) {
    std::mt19937 rng(static_cast<unsigned>(p.m * 7919 + p.n * 131 + p.k));
    a.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, items * p.m * p.k)));
    b.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, items * p.k * p.n)));
    c.assign(static_cast<std::size_t>(std::max<std::int64_t>(1, items * p.m * p.n)), 0);
    for (auto& x : a) x = RandomElement<typename GemmTypes<Kind>::A>(rng);
    for (auto& x : b) x = RandomElement<typename GemmTypes<Kind>::B>(rng);
    if (dequantized) {
      dequantization.a_scale = 0.02f;
      for (std::int64_t j = 0; j < p.n; ++j) {
        b_scales.push_back(0.001f + 0.01f * std::abs(RandomElement<float>(rng)));
        column_scales.push_back(dequantization.a_scale * b_scales.back());
        if (with_bias) float_bias.push_back(RandomElement<float>(rng));
      }
      column_offsets.assign(static_cast<std::size_t>(p.n), 0);
      dequantization.b_scales = b_scales.data();
      float_epilogue = {with_bias ? BiasKind::kPerColumn : BiasKind::kNone, float_bias.data(),
                        activation};
      dequantize = {column_scales.data(), column_offsets.data(), float_epilogue};
      return;
    }
    if (with_bias) {
      for (std::int64_t j = 0; j < p.n; ++j) {
        bias.push_back(std::is_integral_v<C> ? static_cast<C>(static_cast<int>(rng() % 2001) - 1000)
                                             : static_cast<C>(RandomElement<float>(rng)));
      }
      epilogue.bias_kind = BiasKind::kPerColumn;
      epilogue.bias = bias.data();
    }
    epilogue.activation = activation;
  }
};

// C = A * B computed by one implementation; false when it could not run.
template <class Kind>
using GemmCall =
    std::function<bool(const Problem&, const typename GemmTypes<Kind>::A*,
                       const typename GemmTypes<Kind>::B*, typename GemmTypes<Kind>::C*)>;

// What an application without a fused epilogue does: `call`, then `pass` over its C (mmtune's
// vectorized pass, on the calling thread), `items` problems' rows of C one after another.
template <class Kind, class Call>
GemmCall<Kind> ThenPass(const EpilogueCall<typename GemmTypes<Kind>::C>& pass, Call call,
                        std::int64_t items = 1) {
  return [pass, call, items](const Problem& p, const typename GemmTypes<Kind>::A* a,
                             const typename GemmTypes<Kind>::B* b,
                             typename GemmTypes<Kind>::C* c) {
    if (!call(p, a, b, c)) return false;
    pass.Apply(c, p.n, 1, 0, 0, items * p.m, p.n);
    return true;
  };
}

// 32 sampled elements of C (of sampled items of a batch, the last always among them) against a
// dot product in double (exact for the integer GEMM, which must match bit for bit), with a
// tolerance for floating C that grows with K (accumulation order differs between
// implementations).
// `applies`: what the implementation does beyond the GEMM, which the reference then does too
// (gelu and silu with their own rounding allowed for; a dequantized C read as f32).
template <class Kind>
bool ResultLooksRight(const Problem& p, const Operands<Kind>& x, Applies applies) {
  using C = typename GemmTypes<Kind>::C;
  std::mt19937 rng(17);
  const bool dequantized = applies == Applies::kDequantization;
  const bool with_epilogue = applies == Applies::kEpilogue;
  const double epsilon = std::is_integral_v<C> && !dequantized ? 0.0
                         : sizeof(C) == 4                      ? 1e-6
                                                               : 1e-14;
  const Epilogue<C>& epilogue = x.epilogue;
  const Activation activation =
      dequantized ? x.float_epilogue.activation : with_epilogue ? epilogue.activation
                                                                : Activation::kNone;
  const bool exponential = activation == Activation::kGelu || activation == Activation::kSilu;
  for (int sample = 0; sample < 32; ++sample) {
    const std::int64_t item = sample == 0 ? x.items - 1
                                          : static_cast<std::int64_t>(
                                                rng() % static_cast<unsigned>(x.items));
    const std::int64_t i = static_cast<std::int64_t>(rng() % static_cast<unsigned>(p.m));
    const std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<unsigned>(p.n));
    const std::int64_t a0 = item * p.m * p.k, b0 = item * p.k * p.n, c0 = item * p.m * p.n;
    double want = 0.0, magnitude = 0.0;
    for (std::int64_t q = 0; q < p.k; ++q) {
      const double term = ToDouble(x.a[static_cast<std::size_t>(a0 + i * p.k + q)]) *
                          ToDouble(x.b[static_cast<std::size_t>(b0 + q * p.n + j)]);
      want += term;
      magnitude += std::abs(term);
    }
    const auto column = static_cast<std::size_t>(j);
    if (with_epilogue && epilogue.bias != nullptr) want += ToDouble(epilogue.bias[column]);
    if (dequantized) {
      want *= x.column_scales[column];
      magnitude *= x.column_scales[column];
      if (!x.float_bias.empty()) want += x.float_bias[column];
    }
    want = ReferenceActivation(activation, want);
    double got = ToDouble(x.c[static_cast<std::size_t>(c0 + i * p.n + j)]);
    if constexpr (std::is_same_v<C, std::int32_t>) {
      if (dequantized) {
        float value;
        std::memcpy(&value, &x.c[static_cast<std::size_t>(c0 + i * p.n + j)], sizeof value);
        got = value;
      }
    }
    const double tolerance = 8.0 * epsilon * static_cast<double>(p.k + 1) * (1.0 + magnitude) +
                             (exponential ? 2e-5 * std::abs(want) : 0.0);
    if (!(std::abs(got - want) <= tolerance)) {
      return false;
    }
  }
  return true;
}

// OpenMP's idle threads (oneDNN's, OpenBLAS's) spin for milliseconds after a call; on more
// than one thread each timing starts this long after the previous one, so that no library is
// timed while another's idle threads hold the cores.
constexpr std::chrono::milliseconds kSettleBetweenLibraries{50};

template <class Kind>
void TimeOne(benchmark::State& state, const Problem& problem, Operands<Kind>* operands,
             const GemmCall<Kind>& call, double peak_gflops, Applies applies) {
  if (problem.threads > 1) std::this_thread::sleep_for(kSettleBetweenLibraries);
  std::fill(operands->c.begin(), operands->c.end(), 0);
  if (!call(problem, operands->a.data(), operands->b.data(), operands->c.data())) {
    state.SkipWithError("this implementation cannot run the problem");
    return;
  }
  if (!ResultLooksRight(problem, *operands, applies)) {
    state.SkipWithError("wrong result: differs from the reference on sampled elements");
    return;
  }
  for (auto _ : state) {
    call(problem, operands->a.data(), operands->b.data(), operands->c.data());
    benchmark::ClobberMemory();
  }
  const double gflop = problem.Flops() * static_cast<double>(operands->items) * 1e-9;
  state.counters["gflops"] =
      benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["pct_peak"] = benchmark::Counter(
      peak_gflops > 0.0 ? 100.0 * gflop / peak_gflops : 0.0,
      benchmark::Counter::kIsIterationInvariantRate);
}

// "f32/row/NN/128x768x768/t1": the problem part of every benchmark name.
std::string ProblemPart(const Problem& p) {
  return std::string(ToString(p.dtype)) + "/" + ToString(p.layout) + "/" +
         TransPairToString(p.trans_a, p.trans_b) + "/" + std::to_string(p.m) + "x" +
         std::to_string(p.n) + "x" + std::to_string(p.k) + "/t" + std::to_string(p.threads);
}

std::string BenchName(const Problem& p, const std::string& impl) {
  return ProblemPart(p) + "/" + impl;
}

// Everything the registered benchmarks point to; lives until the run is over.
struct Session {
  std::map<int, std::unique_ptr<Runtime>> runtimes;  // by thread budget
  // The same without the DB's winners: the defaults as sized by its measured facts.
  std::map<int, std::unique_ptr<Runtime>> untuned_runtimes;
  std::vector<std::shared_ptr<const void>> keep_alive;  // operands and plans
};

template <class Kind>
auto PeerCall(const Peer& peer) {
  if constexpr (std::is_same_v<Kind, float>) {
    return peer.sgemm;
  } else if constexpr (std::is_same_v<Kind, double>) {
    return peer.dgemm;
  } else if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
    return peer.bf16_gemm;
  } else {
    return peer.u8s8s32_gemm;
  }
}

// The peer's call with B as constant weights; null where it has none.
template <class Kind>
auto PeerPackedBCall(const Peer& peer) {
  if constexpr (std::is_same_v<Kind, float>) {
    return peer.sgemm_packed_b;
  } else if constexpr (std::is_same_v<Kind, double>) {
    return decltype(peer.dgemm)(nullptr);
  } else if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
    return peer.bf16_gemm_packed_b;
  } else {
    return peer.u8s8s32_gemm_packed_b;
  }
}

// The packed weights a Runtime packs for B of each GEMM: T is B's element type.
template <class Kind>
using WeightsOf = PackedWeights<typename GemmTypes<Kind>::B>;

// How the weights hold B, for a row's label.
template <typename T>
std::string PackedLabel(const PackedWeights<T>& weights) {
  return weights.holds_panels() ? "packed B (panels); " : "packed B (copy); ";
}

// The peer's call with a fused bias and activation (Peer::sgemm_epilogue ...); null where it
// has none.
template <class Kind>
auto PeerEpilogueCall(const Peer& peer) {
  if constexpr (std::is_same_v<Kind, float>) {
    return peer.sgemm_epilogue;
  } else if constexpr (std::is_same_v<Kind, double>) {
    using Call = bool (*)(int, std::int64_t, std::int64_t, std::int64_t, const double*,
                          const double*, double*, const double*, Activation, bool);
    return Call(nullptr);
  } else if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
    return peer.bf16_gemm_epilogue;
  } else {
    return peer.u8s8s32_gemm_epilogue;
  }
}

// What the --packed-b rows compute: the GEMM with the request's epilogue or (s8) dequantization,
// if any, run by `rt` on `b` (packed weights, or B as given).
template <class Kind, class Weights>
bool RunWithRequest(Runtime& rt, const Problem& p, const typename GemmTypes<Kind>::A* a,
                    const Weights& b, typename GemmTypes<Kind>::C* c,
                    const Operands<Kind>& x) {
  using Scalar = typename GemmTypes<Kind>::Scalar;
  constexpr bool kPacked = !std::is_pointer_v<Weights>;
  if constexpr (std::is_same_v<Kind, S8Gemm>) {
    if (x.dequantized) {
      float* f32 = reinterpret_cast<float*>(c);
      if constexpr (kPacked) {
        return rt.Gemm(Layout::kRowMajor, Trans::kNo, p.m, a, p.k, b, f32, p.n, x.dequantization,
                       x.float_epilogue)
            .ok();
      } else {
        return rt.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, a, p.k, b, p.n,
                       f32, p.n, x.dequantization, x.float_epilogue)
            .ok();
      }
    }
  }
  if constexpr (kPacked) {
    return rt.Gemm(Layout::kRowMajor, Trans::kNo, p.m, Scalar(1), a, p.k, b, Scalar(0), c, p.n,
                   x.epilogue)
        .ok();
  } else {
    return rt.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, Scalar(1), a, p.k,
                   b, p.n, Scalar(0), c, p.n, x.epilogue)
        .ok();
  }
}

// The --packed-b rows of one problem (ComparisonRequest::packed_b), with the request's epilogue
// or dequantization fused where it has one; B is packed here, before anything is timed. `add`
// registers one row.
template <class Kind, class Add>
Status RegisterPackedB(Session& session, const Machine& machine, const Problem& problem,
                       const Operands<Kind>& operands, Runtime& runtime, Runtime& untuned,
                       const std::vector<Peer>& peers, Add& add,
                       const std::string& unpacked_label) {
  using A = typename GemmTypes<Kind>::A;
  using B = typename GemmTypes<Kind>::B;
  using C = typename GemmTypes<Kind>::C;
  const Operands<Kind>* x = &operands;
  const bool dequantized = operands.dequantized;
  const bool fused = dequantized || !operands.epilogue.Empty();
  const Applies applies = dequantized ? Applies::kDequantization : Applies::kEpilogue;
  const std::string fused_text = fused ? "fused; " : "";
  // A row timing `with`'s packed weights of this problem's B, packed here.
  auto add_weights = [&](const std::string& impl, Runtime& with) -> Status {
    auto weights = with.PackB(Layout::kRowMajor, Trans::kNo, problem.m, problem.n, problem.k,
                              operands.b.data(), problem.n);
    if (!weights) return weights.error();
    auto shared = std::make_shared<const WeightsOf<Kind>>(std::move(*weights));
    session.keep_alive.push_back(shared);
    Runtime* rt = &with;
    add(impl,
        [rt, shared, x](const Problem& p, const A* a, const B*, C* c) {
          return RunWithRequest<Kind>(*rt, p, a, *shared, c, *x);
        },
        fused_text + PackedLabel(*shared) + std::string(ToString(shared->lookup().tier)) +
            ": " + shared->lookup().config_text +
            (shared->lookup().runs_text.empty() ? "" : "; runs " + shared->lookup().runs_text),
        applies);
    return OkStatus();
  };
  if (Status status = add_weights("tuned", runtime); !status) return status;
  // The analytical default: the weights of a runtime without a DB.
  if (Status status = add_weights("default", untuned); !status) return status;
  Runtime* rt = &runtime;
  add("unpacked",
      [rt, x](const Problem& p, const A* a, const B* b, C* c) {
        return RunWithRequest<Kind>(*rt, p, a, b, c, *x);
      },
      fused_text + unpacked_label, applies);

  // Peers with a fused call run it on constant weights; the others run their GEMM and then
  // mmtune's pass over C, as an application without a fused API would.
  const EpilogueCall<C> pass(operands.epilogue, dequantized ? &operands.dequantize : nullptr,
                             machine.kernel_isa);
  for (const Peer& peer : peers) {
    if constexpr (std::is_same_v<Kind, S8Gemm>) {
      if (dequantized && peer.u8s8f32_gemm != nullptr) {
        const auto call = peer.u8s8f32_gemm;
        add(peer.name,
            [call, x](const Problem& p, const A* a, const B* b, C* c) {
              return call(p.threads, p.m, p.n, p.k, a, b, reinterpret_cast<float*>(c),
                          x->column_scales.data(),
                          x->float_bias.empty() ? nullptr : x->float_bias.data(),
                          x->float_epilogue.activation, true);
            },
            "prepacked weights, output scales, bias and post-op fused; " + peer.version,
            applies);
        continue;
      }
    }
    if (const auto call = PeerEpilogueCall<Kind>(peer);
        !dequantized && !operands.epilogue.Empty() && call != nullptr) {
      add(peer.name,
          [call, x](const Problem& p, const A* a, const B* b, C* c) {
            return call(p.threads, p.m, p.n, p.k, a, b, c, x->epilogue.bias,
                        x->epilogue.activation, true);
          },
          "prepacked weights, bias and post-op fused; " + peer.version, applies);
      continue;
    }
    const auto packed_call = PeerPackedBCall<Kind>(peer);
    const auto call = packed_call != nullptr ? packed_call : PeerCall<Kind>(peer);
    if (call == nullptr) continue;
    add(peer.name,
        [call, pass, fused](const Problem& p, const A* a, const B* b, C* c) {
          if (!call(p.threads, p.m, p.n, p.k, a, b, c)) return false;
          if (fused) pass.Apply(c, p.n, 1, 0, 0, p.m, p.n);
          return true;
        },
        (packed_call != nullptr ? "prepacked weights; " : "B not prepacked (no API); ") +
            std::string(fused ? "then mmtune's pass over C; " : "") + peer.version,
        applies);
  }
  return OkStatus();
}

// The peer's batched call (Peer::sgemm_batch ...); null where it has none.
template <class Kind>
auto PeerBatchCall(const Peer& peer) {
  if constexpr (std::is_same_v<Kind, float>) {
    return peer.sgemm_batch;
  } else if constexpr (std::is_same_v<Kind, double>) {
    using Call = bool (*)(int, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                          const double*, const double*, double*, const double*, Activation);
    return Call(nullptr);
  } else if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
    return peer.bf16_gemm_batch;
  } else {
    return peer.u8s8s32_gemm_batch;
  }
}

// The --batch rows of one problem (ComparisonRequest::batch): the operands hold its items one
// after another, and the request's epilogue, if any, applies to every item. With one, "plain"
// is the runtime's batch without it and "separate" that batch followed by a pass over every
// item's C, as for a single GEMM. `add` registers one row.
template <class Kind, class Add>
void RegisterBatch(const Machine& machine, const Problem& problem, const Operands<Kind>& operands,
                   Runtime& runtime, Runtime& untuned, const std::vector<Peer>& peers, Add& add) {
  using A = typename GemmTypes<Kind>::A;
  using B = typename GemmTypes<Kind>::B;
  using C = typename GemmTypes<Kind>::C;
  using Scalar = typename GemmTypes<Kind>::Scalar;
  const std::int64_t items = operands.items;
  const Epilogue<C> epilogue = operands.epilogue;
  const bool fused = !epilogue.Empty();
  const std::string batch = "batch of " + std::to_string(items) + "; ";
  const std::string split = problem.threads == 1      ? "one thread"
                            : items >= problem.threads ? "whole items per thread"
                                                       : "items in turn on every thread";
  auto runtime_batch = [items](Runtime& with, const Epilogue<C>& applied) {
    Runtime* rt = &with;
    return [rt, items, applied](const Problem& p, const A* a, const B* b, C* c) {
      return rt->GemmBatch(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, Scalar(1),
                           a, p.k, b, p.n, Scalar(0), c, p.n,
                           BatchStrides{items, p.m * p.k, p.k * p.n, p.m * p.n}, applied)
          .ok();
    };
  };
  const std::string fused_text = fused ? "fused; " : "";
  add("tuned", runtime_batch(runtime, epilogue), batch + fused_text + split);
  // The analytical default: a runtime without a DB.
  add("default", runtime_batch(untuned, epilogue), batch + fused_text + split);
  // Without the fused epilogue: the GEMMs, then one pass over every item's C.
  const EpilogueCall<C> pass(epilogue, machine.kernel_isa);
  if (fused) {
    add("plain", runtime_batch(runtime, {}), batch + "no epilogue; " + split, Applies::kNothing);
    add("separate", ThenPass<Kind>(pass, runtime_batch(runtime, {}), items),
        batch + "then a pass over C; " + split);
  }
  // What an application without a batch API does: one call per item, in turn.
  auto one_per_item = [items](auto&& call) {
    return [items, call](const Problem& p, const A* a, const B* b, C* c) {
      for (std::int64_t item = 0; item < items; ++item) {
        if (!call(p, a + item * p.m * p.k, b + item * p.k * p.n, c + item * p.m * p.n)) {
          return false;
        }
      }
      return true;
    };
  };
  Runtime* rt = &runtime;
  add("loop",
      one_per_item([rt, epilogue](const Problem& p, const A* a, const B* b, C* c) {
        return rt->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, Scalar(1), a,
                        p.k, b, p.n, Scalar(0), c, p.n, epilogue)
            .ok();
      }),
      batch + fused_text + "one runtime call per item");
  for (const Peer& peer : peers) {
    if (const auto batched = PeerBatchCall<Kind>(peer); batched != nullptr) {
      add(peer.name,
          [batched, items, epilogue](const Problem& p, const A* a, const B* b, C* c) {
            return batched(p.threads, items, p.m, p.n, p.k, a, b, c, epilogue.bias,
                           epilogue.activation);
          },
          batch + "batched call" + (fused ? ", bias and post-op fused; " : "; ") +
              peer.version);
    } else if (const auto call = PeerCall<Kind>(peer); call != nullptr) {
      auto looped = one_per_item([call](const Problem& p, const A* a, const B* b, C* c) {
        return call(p.threads, p.m, p.n, p.k, a, b, c);
      });
      const std::string label = batch + "one call per item (no batch API); ";
      if (fused) {
        add(peer.name, ThenPass<Kind>(pass, looped, items),
            label + "then mmtune's pass over C; " + peer.version);
      } else {
        add(peer.name, looped, label + peer.version);
      }
    }
  }
}

// The --epilogue rows of one problem (ComparisonRequest::bias, activation): `plain` is the
// runtime's GEMM without the epilogue, `plan` the default's. `add` registers one row.
template <class Kind, class Add>
void RegisterEpilogue(const Machine& machine, Runtime& runtime,
                      std::shared_ptr<const GemmPlan<Kind>> plan,
                      const Epilogue<typename GemmTypes<Kind>::C>& epilogue,
                      const std::vector<Peer>& peers, Add& add, const GemmCall<Kind>& plain,
                      const std::string& plain_label) {
  using A = typename GemmTypes<Kind>::A;
  using B = typename GemmTypes<Kind>::B;
  using C = typename GemmTypes<Kind>::C;
  using Scalar = typename GemmTypes<Kind>::Scalar;
  Runtime* rt = &runtime;
  add("tuned",
      [rt, epilogue](const Problem& p, const A* a, const B* b, C* c) {
        return rt->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, Scalar(1), a,
                        p.k, b, p.n, Scalar(0), c, p.n, epilogue)
            .ok();
      },
      "fused; " + plain_label);
  add("default",
      [plan, epilogue](const Problem& p, const A* a, const B* b, C* c) {
        const GemmArgs<Kind> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k,
                                  Scalar(1), a, p.k, b, p.n, Scalar(0), c, p.n, epilogue};
        return plan->Run(args).ok();
      },
      "fused; " + plan->config().ToString());
  add("plain", plain, "no epilogue; " + plain_label, Applies::kNothing);
  const EpilogueCall<C> pass(epilogue, machine.kernel_isa);
  add("separate", ThenPass<Kind>(pass, plain), "GEMM, then a pass over C; " + plain_label);
  for (const Peer& peer : peers) {
    if (const auto fused = PeerEpilogueCall<Kind>(peer); fused != nullptr) {
      add(peer.name,
          [fused, epilogue](const Problem& p, const A* a, const B* b, C* c) {
            return fused(p.threads, p.m, p.n, p.k, a, b, c, epilogue.bias, epilogue.activation,
                         false);
          },
          "bias and post-op fused; " + peer.version);
    } else if (const auto call = PeerCall<Kind>(peer); call != nullptr) {
      add(peer.name,
          ThenPass<Kind>(pass,
                         [call](const Problem& p, const A* a, const B* b, C* c) {
                           return call(p.threads, p.m, p.n, p.k, a, b, c);
                         }),
          "GEMM, then mmtune's pass over C (no fused API); " + peer.version);
    }
  }
}

// The --dequantize rows of an s8 problem (ComparisonRequest::dequantize): C's storage takes the
// f32 results. `plain` is the runtime's s32 GEMM, `plan` the default's. `add` registers one row.
template <class Add>
void RegisterDequantized(const Machine& machine, Runtime& runtime,
                         std::shared_ptr<const GemmPlan<S8Gemm>> plan,
                         const Operands<S8Gemm>& operands, const std::vector<Peer>& peers,
                         Add& add, const GemmCall<S8Gemm>& plain,
                         const std::string& plain_label) {
  using A = std::uint8_t;
  using B = std::int8_t;
  using C = std::int32_t;
  constexpr Applies kDequantized = Applies::kDequantization;
  const Operands<S8Gemm>* x = &operands;
  Runtime* rt = &runtime;
  auto as_f32 = [](C* c) { return reinterpret_cast<float*>(c); };
  add("tuned",
      [rt, x, as_f32](const Problem& p, const A* a, const B* b, C* c) {
        return rt->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, a, p.k, b, p.n,
                        as_f32(c), p.n, x->dequantization, x->float_epilogue)
            .ok();
      },
      "fused; " + plain_label, kDequantized);
  add("default",
      [plan, x](const Problem& p, const A* a, const B* b, C* c) {
        GemmArgs<S8Gemm> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, 1, a,
                              p.k, b, p.n, 0, c, p.n, {}};
        args.dequantize = &x->dequantize;
        return plan->Run(args).ok();
      },
      "fused; " + plan->config().ToString(), kDequantized);
  add("plain", plain, "s32 C, no dequantization; " + plain_label, Applies::kNothing);
  // Without the fused dequantization: the s32 GEMM, then one pass over C that dequantizes.
  const EpilogueCall<C> pass({}, &operands.dequantize, machine.kernel_isa);
  add("separate", ThenPass<S8Gemm>(pass, plain), "s32 GEMM, then a pass over C; " + plain_label,
      kDequantized);
  for (const Peer& peer : peers) {
    if (peer.u8s8f32_gemm != nullptr) {
      const auto fused = peer.u8s8f32_gemm;
      add(peer.name,
          [fused, x, as_f32](const Problem& p, const A* a, const B* b, C* c) {
            return fused(p.threads, p.m, p.n, p.k, a, b, as_f32(c), x->column_scales.data(),
                         x->float_bias.empty() ? nullptr : x->float_bias.data(),
                         x->float_epilogue.activation, false);
          },
          "output scales, bias and post-op fused; " + peer.version, kDequantized);
    } else if (peer.u8s8s32_gemm != nullptr) {
      const auto call = peer.u8s8s32_gemm;
      add(peer.name,
          ThenPass<S8Gemm>(pass,
                           [call](const Problem& p, const A* a, const B* b, C* c) {
                             return call(p.threads, p.m, p.n, p.k, a, b, c);
                           }),
          "s32 GEMM, then mmtune's pass over C (no fused API); " + peer.version, kDequantized);
    }
  }
}

// `untuned`: a runtime without the DB's winners, for the default rows of packed weights and
// batches (null without them); `batch`: the GEMMs of a batch (0: none; a batch of 1 is still a
// batch).
template <class Kind>
Status RegisterProblem(Session& session, const Problem& problem, const Machine& machine,
                       Runtime& runtime, Runtime* untuned, const std::vector<Peer>& peers,
                       double peak_gflops, const ComparisonRequest& request) {
  using A = typename GemmTypes<Kind>::A;
  using B = typename GemmTypes<Kind>::B;
  using C = typename GemmTypes<Kind>::C;
  using Scalar = typename GemmTypes<Kind>::Scalar;
  const std::int64_t batch = request.batch;
  auto operands_owner = std::make_shared<Operands<Kind>>(
      problem, std::max<std::int64_t>(1, batch), request.bias, request.activation,
      request.dequantize);
  Operands<Kind>* operands = operands_owner.get();
  session.keep_alive.push_back(operands_owner);
  // `applies`: what the row does beyond the GEMM (the request's epilogue, if any, by default).
  auto add = [&](const std::string& impl, GemmCall<Kind> call, const std::string& label,
                 Applies applies = Applies::kEpilogue) {
    benchmark::RegisterBenchmark(BenchName(problem, impl).c_str(),
                                 [=](benchmark::State& state) {
                                   TimeOne<Kind>(state, problem, operands, call, peak_gflops,
                                                 applies);
                                   if (!label.empty()) state.SetLabel(label);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };

  // The runtime as an application gets it: lookup on every call.
  Runtime* rt = &runtime;
  const LookupReport lookup = runtime.Lookup(problem);
  const GemmCall<Kind> unpacked = [rt](const Problem& p, const A* a, const B* b, C* c) {
    return rt->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, Scalar(1), a, p.k,
                    b, p.n, Scalar(0), c, p.n)
        .ok();
  };
  const std::string unpacked_label = std::string(ToString(lookup.tier)) + ": " + lookup.config_text;
  if (batch > 0) {
    RegisterBatch<Kind>(machine, problem, *operands, runtime, *untuned, peers, add);
    return OkStatus();
  }
  if (untuned != nullptr) {
    return RegisterPackedB<Kind>(session, machine, problem, *operands, runtime, *untuned, peers,
                                 add, unpacked_label);
  }
  // The analytical default as the runtime runs an untuned shape: on as many of the problem's
  // threads as the work pays for (DefaultThreadCount), so a 16^3 stays on one thread.
  const KernelConfig config = UntunedConfig(problem, machine);
  auto plan = GemmPlan<Kind>::Create(config);
  if (!plan) return plan.error();
  auto shared = std::make_shared<const GemmPlan<Kind>>(std::move(*plan));
  session.keep_alive.push_back(shared);
  if constexpr (std::is_same_v<Kind, S8Gemm>) {
    if (operands->dequantized) {
      RegisterDequantized(machine, runtime, shared, *operands, peers, add, unpacked,
                          unpacked_label);
      return OkStatus();
    }
  }
  if (!operands->epilogue.Empty()) {
    RegisterEpilogue<Kind>(machine, runtime, shared, operands->epilogue, peers, add, unpacked,
                           unpacked_label);
    return OkStatus();
  }
  add("tuned", unpacked, unpacked_label);
  add("default",
      [shared](const Problem& p, const A* a, const B* b, C* c) {
        const GemmArgs<Kind> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k,
                                  Scalar(1),         a,          p.k,        b,   p.n, Scalar(0),
                                  c,                 p.n, {}};
        return shared->Run(args).ok();
      },
      config.ToString());

  for (const Peer& peer : peers) {
    const auto call = PeerCall<Kind>(peer);
    if (call == nullptr) continue;  // e.g. oneDNN and libxsmm here have no f64 GEMM
    add(peer.name,
        [call](const Problem& p, const A* a, const B* b, C* c) {
          return call(p.threads, p.m, p.n, p.k, a, b, c);
        },
        peer.version);
  }
  return OkStatus();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PeerVersions() {
  std::vector<std::pair<std::string, std::string>> versions;
  for (const Peer& peer : AvailablePeers()) versions.emplace_back(peer.name, peer.version);
  return versions;
}

std::string ComparisonRequest::EpilogueText() const {
  if (!HasEpilogue()) return "none";
  if (activation == Activation::kNone) return "bias";
  return (bias ? std::string("bias+") : std::string()) + ToString(activation);
}

Status ParseEpilogue(const std::string& text, ComparisonRequest* request) {
  request->bias = false;
  request->activation = Activation::kNone;
  int activations = 0;
  for (std::size_t begin = 0; begin <= text.size();) {
    std::size_t end = text.find('+', begin);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(begin, end - begin);
    begin = end + 1;
    auto activation = ParseActivation(part);
    if (part == "bias" && !request->bias) {
      request->bias = true;
    } else if (activation && *activation != Activation::kNone && activations++ == 0) {
      request->activation = *activation;
    } else {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--epilogue: cannot use '" + part + "' in '" + text +
                           "' (expected bias, relu, gelu or silu, each once, joined by '+')");
    }
  }
  if (!request->HasEpilogue()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--epilogue: nothing in '" + text + "' (e.g. bias+gelu)");
  }
  return OkStatus();
}

Status CheckComparisonRequest(const ComparisonRequest& request) {
  const std::vector<Peer> available = AvailablePeers();
  for (const std::string& name : request.peers) {
    const auto it = std::find_if(available.begin(), available.end(),
                                 [&](const Peer& peer) { return peer.name == name; });
    if (it == available.end()) {
      std::string found;
      for (const Peer& peer : available) found += (found.empty() ? "" : ", ") + peer.name;
      return MakeError(ErrorCode::kUnsupported,
                       "peer '" + name + "' is not in this build (found: " +
                           (found.empty() ? "none; scripts/setup.sh --with-peers installs them"
                                          : found) +
                           ")");
    }
  }
  if (request.batch < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--batch must be >= 1 (or 0: no batch), got " +
                         std::to_string(request.batch));
  }
  if (request.batch > 0 && request.packed_b) {
    return MakeError(ErrorCode::kUnsupported, "--batch and --packed-b do not combine");
  }
  if (request.dequantize && request.batch > 0) {
    return MakeError(ErrorCode::kUnsupported, "--dequantize does not combine with --batch");
  }
  for (const Problem& problem : request.problems) {
    if (auto status = problem.Validate(); !status) return status;
    if (request.dequantize && problem.dtype != DType::kS8) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string("--dequantize needs --dtype s8 (the 8-bit GEMM), got ") +
                           ToString(problem.dtype));
    }
    if (problem.dtype == DType::kS8 && !request.dequantize &&
        (request.activation == Activation::kGelu || request.activation == Activation::kSilu)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string("--epilogue: ") + ToString(request.activation) +
                           " needs a floating-point C; s8 (C s32) takes bias and relu, or "
                           "add --dequantize");
    }
    if (problem.layout != Layout::kRowMajor || problem.trans_a != Trans::kNo ||
        problem.trans_b != Trans::kNo) {
      return MakeError(ErrorCode::kUnsupported,
                       "mmtune bench compares row-major NN problems only (" + problem.ToString() +
                           ")");
    }
    if (problem.m == 0 || problem.n == 0 || problem.k == 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "nothing to time in " + problem.ToString() + " (a dimension is 0)");
    }
  }
  return OkStatus();
}

Status RunComparison(const ComparisonRequest& request, const Machine& machine,
                     const nlohmann::json& peaks) {
  if (auto status = CheckComparisonRequest(request); !status) return status;
  const std::vector<Peer> available = AvailablePeers();
  std::vector<Peer> peers;
  for (const std::string& name : request.peers) {
    peers.push_back(*std::find_if(available.begin(), available.end(),
                                  [&](const Peer& peer) { return peer.name == name; }));
  }

  static Session session;  // Google Benchmark keeps the registrations until the process ends
  // The runtime of `db_path` with `threads`, opened once per thread budget.
  auto runtime_of = [&](std::map<int, std::unique_ptr<Runtime>>& runtimes,
                        bool use_winners, int threads) -> Result<Runtime*> {
    std::unique_ptr<Runtime>& runtime = runtimes[threads];
    if (!runtime) {
      RuntimeOptions options;
      options.db_path = request.db_path;
      options.use_winners = use_winners;
      options.max_threads = threads;
      options.record_from_environment = false;  // the benchmark's calls are not the app's
      auto opened = Runtime::Open(options);
      if (!opened) return opened.error();
      runtime = std::move(*opened);
    }
    return runtime.get();
  };
  for (const Problem& problem : request.problems) {
    auto runtime = runtime_of(session.runtimes, true, problem.threads);
    if (!runtime) return runtime.error();
    Runtime* untuned = nullptr;
    if (request.packed_b || request.batch > 0) {
      auto opened = runtime_of(session.untuned_runtimes, false, problem.threads);
      if (!opened) return opened.error();
      untuned = *opened;
    }
    const double peak = RooflineOf(problem, peaks).compute_gflops;
    Status status = OkStatus();
    switch (problem.dtype) {
      case DType::kF32:
        status = RegisterProblem<float>(session, problem, machine, **runtime, untuned, peers,
                                        peak, request);
        break;
      case DType::kF64:
        status = RegisterProblem<double>(session, problem, machine, **runtime, untuned, peers,
                                         peak, request);
        break;
      case DType::kBF16:
        status = RegisterProblem<Bf16Gemm>(session, problem, machine, **runtime, untuned, peers,
                                           peak, request);
        break;
      case DType::kS8:
        status = RegisterProblem<S8Gemm>(session, problem, machine, **runtime, untuned, peers,
                                         peak, request);
        break;
    }
    if (!status) return status;
  }

  benchmark::AddCustomContext("mmtune_fingerprint", machine.fingerprint);
  benchmark::AddCustomContext("mmtune_kernel_isa", ToString(machine.kernel_isa));
  benchmark::AddCustomContext("mmtune_db", request.db_path);
  benchmark::AddCustomContext("mmtune_packed_b", request.packed_b ? "true" : "false");
  benchmark::AddCustomContext("mmtune_batch", std::to_string(request.batch));
  benchmark::AddCustomContext("mmtune_epilogue", request.EpilogueText());
  benchmark::AddCustomContext("mmtune_dequantize", request.dequantize ? "true" : "false");
  for (const Peer& peer : available) {
    benchmark::AddCustomContext("peer_" + peer.name, peer.version);
  }

  // Google Benchmark takes its settings as flags: repetitions interleaved at random across all
  // registered benchmarks, so slow drifts of the machine hit every implementation alike.
  std::vector<std::string> flags = {
      "mmtune bench",
      "--benchmark_repetitions=" + std::to_string(std::max(1, request.repetitions)),
      "--benchmark_enable_random_interleaving=true",
      "--benchmark_min_time=" + std::to_string(request.min_time_seconds),
      "--benchmark_display_aggregates_only=true",
  };
  if (!request.json_path.empty()) {
    flags.push_back("--benchmark_out=" + request.json_path);
    flags.push_back("--benchmark_out_format=json");
  }
  std::vector<char*> argv;
  for (std::string& flag : flags) argv.push_back(flag.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  std::vector<std::string> keys;
  for (const Problem& problem : request.problems) keys.push_back(ProblemPart(problem));
  SummaryReporter reporter(std::move(keys), isatty(STDOUT_FILENO) == 1);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  reporter.PrintSummary(std::cout);
  return OkStatus();
}

}  // namespace mmtune
