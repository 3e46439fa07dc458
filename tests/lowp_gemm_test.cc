// The low-precision GEMMs (bf16 x bf16 -> f32, u8 x s8 -> s32) against their reference: every
// registered micro-kernel on every tile corner, then the full GEMM with many random configs per
// shape, both layouts, all transposes, padded leading dimensions, alpha/beta variants, NaN in C
// with beta = 0 and canaries around C. s8 results must match bit for bit; bf16 within an f32
// accumulation bound that scales with K.
#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/aligned_allocator.h"
#include "gemm_test_util.h"
#include "kernels/cache_line.h"
#include "kernels/default_config.h"
#include "kernels/gemm_args.h"
#include "kernels/packing.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_reference.h"
#include "kernels/reference_gemm.h"
#include "machine/machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

using testing::PackedConfigOf;
using testing::RunnableLevels;
using testing::StoredExtent;

template <class Kind>
constexpr typename Kind::C kCanary = static_cast<typename Kind::C>(-98765);

template <class Kind>
bool Runnable(IsaLevel isa) {
  const CpuFeatures& cpu = HostCpuFeatures();
  return IsaWithin(isa, cpu.MaxIsaLevel()) && CpuRunsLowp<Kind>(cpu, isa);
}

// The micro-kernel tables of `isa` to check on this CPU: the registry's, and for s8 at the AVX2
// level on a CPU with AVX-VNNI also the VPMADDWD table that the registry serves to every other
// AVX2 CPU; at the neon-dot level on a CPU with I8MM also the SDOT table of CPUs without it.
template <class Kind>
std::vector<std::span<const LowpMicroKernelEntry<Kind>>> MicroKernelTables(IsaLevel isa) {
  std::vector<std::span<const LowpMicroKernelEntry<Kind>>> tables = {MicroKernels<Kind>(isa)};
#if defined(__x86_64__)
  if constexpr (std::is_same_v<Kind, S8Gemm>) {
    if (isa == IsaLevel::kAvx2 && HostCpuFeatures().avx_vnni) {
      EXPECT_EQ(tables.front().data(), AvxVnniS8MicroKernels().data());
      tables.push_back(Avx2S8MicroKernels());
    }
  }
#elif defined(__aarch64__)
  if constexpr (std::is_same_v<Kind, S8Gemm>) {
    if (isa == IsaLevel::kNeonDot && HostCpuFeatures().i8mm) {
      // USDOT's vector tiles, then USMMLA's paired ones.
      EXPECT_EQ(tables.front().size(),
                UsdotS8MicroKernels().size() + UsmmlaS8MicroKernels().size());
      EXPECT_EQ(tables.front().back().packed, UsmmlaS8MicroKernels().back().packed);
      tables.push_back(SdotS8MicroKernels());
    }
  }
#endif
  return tables;
}

// The gemv tables of `isa` to check on this CPU, as MicroKernelTables: for s8 at the AVX2 level
// on a CPU with AVX-VNNI also the VPMADDWD table, at neon-dot with I8MM also the SDOT table.
template <class Kind>
std::vector<std::span<const LowpGemvKernelEntry<Kind>>> GemvKernelTables(IsaLevel isa) {
  std::vector<std::span<const LowpGemvKernelEntry<Kind>>> tables = {GemvKernels<Kind>(isa)};
#if defined(__x86_64__)
  if constexpr (std::is_same_v<Kind, S8Gemm>) {
    if (isa == IsaLevel::kAvx2 && HostCpuFeatures().avx_vnni) {
      EXPECT_EQ(tables.front().data(), AvxVnniS8GemvKernels().data());
      tables.push_back(Avx2S8GemvKernels());
    }
  }
#elif defined(__aarch64__)
  if constexpr (std::is_same_v<Kind, S8Gemm>) {
    if (isa == IsaLevel::kNeonDot && HostCpuFeatures().i8mm) {
      EXPECT_EQ(tables.front().data(), UsdotS8GemvKernels().data());
      tables.push_back(SdotS8GemvKernels());
    }
  }
#endif
  return tables;
}

BFloat16 RandomElement(BFloat16*, std::mt19937_64& rng) {
  return ToBFloat16(static_cast<float>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng)));
}
std::uint8_t RandomElement(std::uint8_t*, std::mt19937_64& rng) {
  return static_cast<std::uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
}
std::int8_t RandomElement(std::int8_t*, std::mt19937_64& rng) {
  return static_cast<std::int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
}
template <typename T>
T Random(std::mt19937_64& rng) {
  return RandomElement(static_cast<T*>(nullptr), rng);
}

double Magnitude(BFloat16 x) { return std::abs(ToFloat(x)); }

// Storage that starts on a cache line, so that a case's leading dimension decides whether C's
// rows do: the tile kernels keep C in their tiles only where they do.
template <typename T>
using Storage = std::vector<T, AlignedAllocator<T, 64>>;

// One GEMM case: operands with padding, C with canaries around its window, the reference answer
// and (bf16) the allowed error per element of C's storage. Each operand starts kPad elements
// (a multiple of 64 bytes) into its cache-line-aligned storage.
template <class Kind>
struct LowpCase {
  static constexpr std::int64_t kPad = 64;
  GemmArgs<Kind> args;
  Storage<typename Kind::A> a;
  Storage<typename Kind::B> b;
  Storage<typename Kind::C> c;
  Storage<typename Kind::C> expected;
  std::vector<double> bound;
  std::string name;

  GemmArgs<Kind> Bound() {
    GemmArgs<Kind> bound_args = args;
    bound_args.a = a.data() + kPad;
    bound_args.b = b.data() + kPad;
    bound_args.c = c.data() + kPad;
    return bound_args;
  }
};

template <class Kind>
LowpCase<Kind> MakeCase(Layout layout, Trans ta, Trans tb, std::int64_t m, std::int64_t n,
                        std::int64_t k, typename Kind::Scalar alpha, typename Kind::Scalar beta,
                        std::int64_t extra_ld, bool nan_c, std::mt19937_64& rng) {
  using C = typename Kind::C;
  LowpCase<Kind> lc;
  GemmArgs<Kind>& args = lc.args;
  args = {layout, ta, tb, m, n, k, alpha, nullptr, 0, nullptr, 0, beta, nullptr, 0, {}};
  args.lda = MinLeadingDimension(layout, ta, m, k) + extra_ld;
  args.ldb = MinLeadingDimension(layout, tb, k, n) + extra_ld;
  args.ldc = MinLeadingDimension(layout, Trans::kNo, m, n) + extra_ld;
  auto fill = [&](auto& storage, Trans trans, std::int64_t rows, std::int64_t cols,
                  std::int64_t ld) {
    using T = typename std::decay_t<decltype(storage)>::value_type;
    storage.assign(static_cast<std::size_t>(StoredExtent(layout, trans, rows, cols, ld) +
                                            2 * LowpCase<Kind>::kPad),
                   T{});
    for (auto& value : storage) value = Random<T>(rng);  // padding too: it must not matter
  };
  fill(lc.a, ta, m, k, args.lda);
  fill(lc.b, tb, k, n, args.ldb);
  lc.c.assign(static_cast<std::size_t>(StoredExtent(layout, Trans::kNo, m, n, args.ldc) +
                                       2 * LowpCase<Kind>::kPad),
              kCanary<Kind>);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      C& out = lc.c[static_cast<std::size_t>(LowpCase<Kind>::kPad +
                                             StoredOffset(layout, i, j, args.ldc))];
      if constexpr (std::is_same_v<C, float>) {
        out = nan_c ? std::numeric_limits<float>::quiet_NaN()
                    : static_cast<float>(std::uniform_real_distribution<double>(-1, 1)(rng));
      } else {
        out = static_cast<C>(std::uniform_int_distribution<std::int32_t>(
            std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max())(rng));
      }
    }
  }
  lc.expected = lc.c;
  GemmArgs<Kind> reference = lc.Bound();
  reference.c = lc.expected.data() + LowpCase<Kind>::kPad;
  EXPECT_TRUE(ReferenceLowpGemm<Kind>(reference).ok());
  // bf16: the kernels accumulate in f32, so |error| <= (k + 4) * eps32 * (|alpha| sum |a||b| +
  // |beta c|), the forward-error bound of a dot product with slack for the summation order.
  lc.bound.assign(lc.c.size(), 0.0);
  if constexpr (std::is_same_v<C, float>) {
    const double eps = std::numeric_limits<float>::epsilon();
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::int64_t p = 0; p < k; ++p) {
          const auto a = lc.a[static_cast<std::size_t>(
              LowpCase<Kind>::kPad + (ta == Trans::kNo ? StoredOffset(layout, i, p, args.lda)
                                                       : StoredOffset(layout, p, i, args.lda)))];
          const auto b = lc.b[static_cast<std::size_t>(
              LowpCase<Kind>::kPad + (tb == Trans::kNo ? StoredOffset(layout, p, j, args.ldb)
                                                       : StoredOffset(layout, j, p, args.ldb)))];
          sum += Magnitude(a) * Magnitude(b);
        }
        const std::size_t at =
            static_cast<std::size_t>(LowpCase<Kind>::kPad + StoredOffset(layout, i, j, args.ldc));
        const double c_term = beta == 0 ? 0.0 : std::abs(beta * lc.c[at]);
        lc.bound[at] = (std::abs(alpha) * sum + c_term) * eps * static_cast<double>(k + 4) + 1e-30;
      }
    }
  }
  lc.name = std::string(ToString(Kind::kDType)) + " " + ToString(layout) + " " +
            TransPairToString(ta, tb) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
            std::to_string(k) + " alpha " + std::to_string(alpha) + " beta " +
            std::to_string(beta) + " ld+" + std::to_string(extra_ld) +
            (nan_c ? " NaN-in-C" : "");
  return lc;
}

// The window within the bound (s8: equal), everything else still the canary. Returns the
// number of bad elements and reports the first few.
template <class Kind>
int CheckResult(const LowpCase<Kind>& lc, const std::string& what) {
  int bad = 0;
  for (std::size_t i = 0; i < lc.c.size(); ++i) {
    const auto got = lc.c[i];
    const auto want = lc.expected[i];
    bool ok = false;
    if constexpr (std::is_same_v<typename Kind::C, float>) {
      ok = want == kCanary<Kind> ? got == kCanary<Kind>
                                 : std::isfinite(got) && std::abs(got - want) <= lc.bound[i];
    } else {
      ok = got == want;
    }
    if (!ok && ++bad <= 3) {
      ADD_FAILURE() << what << " | " << lc.name << ": storage[" << static_cast<std::int64_t>(i) -
                    LowpCase<Kind>::kPad << "] = " << got << ", expected " << want;
    }
  }
  return bad;
}

// Runs `config` on the case: a failure names the config and why (plan, arguments, or the
// wrong elements CheckResult reported).
template <class Kind>
::testing::AssertionResult RunsCorrectly(LowpCase<Kind>& lc, const KernelConfig& config) {
  auto plan = GemmPlan<Kind>::Create(config);
  if (!plan.ok()) {
    return ::testing::AssertionFailure() << config.ToString() << ": " << plan.error().message;
  }
  if (const Status status = plan->Run(lc.Bound()); !status.ok()) {
    return ::testing::AssertionFailure() << config.ToString() << ": " << status.error().message;
  }
  if (const int bad = CheckResult(lc, config.ToString()); bad > 0) {
    return ::testing::AssertionFailure() << config.ToString() << ": " << bad << " wrong elements";
  }
  return ::testing::AssertionSuccess();
}

// Runs the gemv kernel `entry` itself through the gemv driver, for a table the registry does not
// serve on this CPU (a plan would find the registry's kernel of the same shape).
template <class Kind>
::testing::AssertionResult GemvEntryRunsCorrectly(LowpCase<Kind>& lc, const KernelConfig& config,
                                                  const LowpGemvKernelEntry<Kind>& entry) {
  if (!detail::RunGemv<Kind>(config, entry, detail::RowMajorProblem(lc.Bound()),
                             DefaultThreadPool())) {
    return ::testing::AssertionFailure() << config.ToString() << ": no scratch memory";
  }
  if (const int bad = CheckResult(lc, config.ToString()); bad > 0) {
    return ::testing::AssertionFailure() << config.ToString() << " (set-aside table): " << bad
                                         << " wrong elements";
  }
  return ::testing::AssertionSuccess();
}

template <class Kind>
class LowpGemmTest : public ::testing::Test {};
using Kinds = ::testing::Types<Bf16Gemm, S8Gemm>;
TYPED_TEST_SUITE(LowpGemmTest, Kinds);

template <class Kind>
typename Kind::Scalar ScalarFrom(double value) {
  return static_cast<typename Kind::Scalar>(value);
}

// A random mr x k A and k x nr B (row-major) and their panels as the packed driver lays them out
// for a kernel whose A runs are `a_group` long: k zero-padded to `depth`, a multiple of it.
template <class Kind>
struct TileOperands {
  TileOperands(int mr, int nr, std::int64_t k, int a_group, std::mt19937_64& rng)
      : depth((k + a_group - 1) / a_group * a_group),
        a(static_cast<std::size_t>(mr * k)),
        b(static_cast<std::size_t>(k * nr)),
        packed_a(static_cast<std::size_t>(mr * depth)),
        packed_b(static_cast<std::size_t>(nr * depth)) {
    for (auto& x : a) x = Random<typename Kind::A>(rng);
    for (auto& x : b) x = Random<typename Kind::B>(rng);
    PackA(MatrixView<typename Kind::A>{a.data(), k, Trans::kNo}, 0, mr, 0, k, mr, a_group,
          packed_a.data(), depth);
    PackB(MatrixView<typename Kind::B>{b.data(), nr, Trans::kNo}, 0, k, 0, nr, nr, Kind::kGroup,
          packed_b.data(), depth);
  }
  std::int64_t depth;
  std::vector<typename Kind::A> a;
  std::vector<typename Kind::B> b;
  std::vector<typename Kind::A> packed_a;
  std::vector<typename Kind::B> packed_b;
};

// C's m x n window for an epilogue kernel's tile: row-major rows ld apart or column-major,
// inside canaries (kPad elements before it, the rest of the storage after it).
struct TileWindow {
  static constexpr std::int64_t kPad = 16;
  TileWindow(int mr, int nr, int m_, int n_, bool column_major_)
      : m(m_),
        n(n_),
        column_major(column_major_),
        ld((column_major ? m : n) + 3),
        row_stride(column_major ? 1 : ld),
        col_stride(column_major ? ld : 1),
        storage(static_cast<std::size_t>(2 * kPad + (mr + nr + 1) * ld)) {}
  std::size_t At(std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(kPad + i * row_stride + j * col_stride);
  }
  // The window's (i, j) at storage element `at`; false for a canary around the window.
  bool Locate(std::size_t at, std::int64_t& i, std::int64_t& j) const {
    const std::int64_t offset = static_cast<std::int64_t>(at) - kPad;
    i = column_major ? offset % ld : offset / ld;
    j = column_major ? offset / ld : offset % ld;
    return offset >= 0 && i < m && j < n;
  }
  // The case in failure messages.
  std::string Describe(IsaLevel isa, int mr, int nr, int k_unroll, std::int64_t k,
                       const TileEpilogue<float>& e) const {
    return std::string(ToString(isa)) + " " + std::to_string(mr) + "x" + std::to_string(nr) +
           " ku" + std::to_string(k_unroll) + " m" + std::to_string(m) + " n" + std::to_string(n) +
           " k" + std::to_string(k) + " " + ToString(e.activation) + " bias " +
           ToString(e.bias_kind) + (column_major ? " column-major" : "");
  }
  int m;
  int n;
  bool column_major;
  std::int64_t ld;
  std::int64_t row_stride;
  std::int64_t col_stride;
  std::size_t storage;
};

// Every micro-kernel of every runnable ISA, called directly on packed panels, for every tile
// corner m <= MR, n <= NR and k with whole, partial and many groups: the m x n corner is right
// and nothing else in C changes.
TYPED_TEST(LowpGemmTest, EveryMicroKernelOnEveryTileCorner) {
  using Kind = TypeParam;
  using C = typename Kind::C;
  constexpr int G = Kind::kGroup;
  std::mt19937_64 rng(5);
  int kernels_run = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& table : MicroKernelTables<Kind>(isa)) {
      for (const auto& entry : table) {
        if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
        const int mr = entry.mr, nr = entry.nr;
        const int ag = entry.a_group;  // k of one packed A run (a tile row for AMX)
        for (std::int64_t k : {std::int64_t{1}, std::int64_t{G + 1}, std::int64_t{4 * G * 2 + 3},
                               std::int64_t{2 * ag + G + 1}}) {
          const TileOperands<Kind> operands(mr, nr, k, ag, rng);
          const auto& a = operands.a;
          const auto& b = operands.b;
          const std::int64_t depth = operands.depth;
          const std::int64_t ldc = nr + 3;
          for (int m = 1; m <= mr; ++m) {
            for (int n = 1; n <= nr; ++n) {
              std::vector<C> c(static_cast<std::size_t>((mr + 1) * ldc), kCanary<Kind>);
              LowpMicroKernelArgs<Kind> args;
              args.groups = depth / G;
              args.a = operands.packed_a.data();
              args.b = operands.packed_b.data();
              args.c = c.data() + ldc;  // row 0 of c stays canary: rows above the tile
              args.row_stride = ldc;
              args.m = m;
              args.n = n;
              args.alpha = ScalarFrom<Kind>(2);
              args.beta = 0;  // C holds canaries, which must not be read
              if (entry.enter != nullptr) entry.enter();
              entry.packed(args);
              if (entry.leave != nullptr) entry.leave();
              for (std::int64_t i = 0; i <= mr; ++i) {
                for (std::int64_t j = 0; j < ldc; ++j) {
                  const C got = c[static_cast<std::size_t>(i * ldc + j)];
                  const std::int64_t row = i - 1;
                  if (row < 0 || row >= m || j >= n) {
                    ASSERT_EQ(got, kCanary<Kind>) << ToString(isa) << " " << mr << "x" << nr
                                                  << " ku" << entry.k_unroll << " m" << m << " n"
                                                  << n << " k" << k << " wrote (" << row << ", "
                                                  << j << ")";
                    continue;
                  }
                  double want = 0.0;
                  double scale = 0.0;
                  std::int64_t exact = 0;
                  for (std::int64_t p = 0; p < k; ++p) {
                    const auto x = a[static_cast<std::size_t>(row * k + p)];
                    const auto y = b[static_cast<std::size_t>(p * nr + j)];
                    if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
                      want += static_cast<double>(ToFloat(x)) * ToFloat(y);
                      scale += Magnitude(x) * Magnitude(y);
                    } else {
                      exact += static_cast<std::int64_t>(x) * static_cast<std::int64_t>(y);
                    }
                  }
                  if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
                    ASSERT_NEAR(got, 2 * want, 2 * scale * 1e-6 * (k + 4) + 1e-30)
                        << ToString(isa) << " " << mr << "x" << nr << " m" << m << " n" << n;
                  } else {
                    ASSERT_EQ(got, static_cast<C>(2 * exact))
                        << ToString(isa) << " " << mr << "x" << nr << " m" << m << " n" << n;
                  }
                }
              }
            }
          }
        }
        ++kernels_run;
      }
    }
  }
  EXPECT_GT(kernels_run, 0);
}

// The bf16 kernels' `packed_epilogue` instances on every tile corner, C row-major and
// column-major (the buffered path): C = act(alpha * A B + beta * C + bias) with every activation
// and bias kind in turn, NaN in C under beta = 0, canaries around the tile (the s8 kernels'
// instances dequantize: below).
TEST(LowpEpilogueKernelTest, Bf16KernelsApplyItToTheTileInRegisters) {
  using Kind = Bf16Gemm;
  constexpr int G = Kind::kGroup;
  constexpr Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGelu,
                                         Activation::kSilu};
  constexpr BiasKind kBiasKinds[] = {BiasKind::kNone, BiasKind::kPerColumn, BiasKind::kPerRow};
  std::mt19937_64 rng(17);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& entry : MicroKernels<Kind>(isa)) {
      if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
      ASSERT_EQ(entry.packed_epilogue == nullptr, entry.tiles) << ToString(isa) << " " << entry.mr;
      if (entry.tiles) continue;
      const int mr = entry.mr, nr = entry.nr;
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{4 * G * 2 + 3}}) {
        const TileOperands<Kind> operands(mr, nr, k, G, rng);
        const auto& a = operands.a;
        const auto& b = operands.b;
        std::vector<float> bias(static_cast<std::size_t>(std::max(mr, nr)));
        for (float& value : bias) value = static_cast<float>(rng() % 9) - 4.0f;
        for (int m = 1; m <= mr; ++m) {
          for (int n = 1; n <= nr; ++n) {
            const int turn = cases++;
            const TileWindow window(mr, nr, m, n, turn % 5 == 4);
            const bool beta_zero = turn % 2 == 0;
            std::vector<float> c(window.storage, kCanary<Kind>);
            std::vector<float> old = c;
            for (int i = 0; i < m; ++i) {
              for (int j = 0; j < n; ++j) {
                const std::size_t at = window.At(i, j);
                c[at] = beta_zero ? std::numeric_limits<float>::quiet_NaN()
                                  : static_cast<float>(rng() % 7) - 3.0f;
                old[at] = c[at];
              }
            }
            LowpMicroKernelArgs<Kind> args;
            args.groups = operands.depth / G;
            args.a = operands.packed_a.data();
            args.b = operands.packed_b.data();
            args.c = c.data() + TileWindow::kPad;
            args.row_stride = window.row_stride;
            args.col_stride = window.col_stride;
            args.m = m;
            args.n = n;
            args.alpha = turn % 3 == 0 ? 1.0f : 0.5f;
            args.beta = beta_zero ? 0.0f : 2.0f;
            args.epilogue.bias = bias.data();
            args.epilogue.activation = kActivations[turn % 4];
            args.epilogue.bias_kind = kBiasKinds[turn / 4 % 3];
            entry.packed_epilogue(args);
            const std::string what = window.Describe(isa, mr, nr, entry.k_unroll, k, args.epilogue);
            for (std::size_t at = 0; at < c.size(); ++at) {
              std::int64_t i = 0, j = 0;
              if (!window.Locate(at, i, j)) {
                ASSERT_EQ(c[at], kCanary<Kind>) << what << " wrote storage element " << at;
                continue;
              }
              double product = 0.0;
              double scale = 0.0;  // of the f32 sum's rounding
              for (std::int64_t p = 0; p < k; ++p) {
                const BFloat16 x = a[static_cast<std::size_t>(i * k + p)];
                const BFloat16 y = b[static_cast<std::size_t>(p * nr + j)];
                product += static_cast<double>(ToFloat(x)) * ToFloat(y);
                scale += Magnitude(x) * Magnitude(y);
              }
              const auto& e = args.epilogue;
              const double added = e.bias_kind == BiasKind::kPerColumn ? e.bias[j]
                                   : e.bias_kind == BiasKind::kPerRow  ? e.bias[i]
                                                                       : 0.0;
              const double value = args.alpha * product + (beta_zero ? 0.0 : 2.0 * old[at]) + added;
              const double want = ReferenceActivation(e.activation, value);
              // The sum's bound as in the test above, through the activation's slope (below
              // 1.2), and the rounding of beta, the bias and the activation itself.
              const double bound = 1.2 * scale * 1e-6 * static_cast<double>(k + 4) +
                                   1e-6 * (std::abs(value) + 1) + 2e-5 * std::abs(want);
              ASSERT_NEAR(c[at], want, bound) << what << " (" << i << ", " << j << ")";
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// The s8 kernels' `packed_epilogue` instances on every tile corner, C row-major and
// column-major: each s32 sum dequantized in registers to act(scale * (alpha * sum + beta * C +
// offset) + bias) in C's storage as f32, offsets that wrap modulo 2^32, canaries around the
// tile. C holds the sums of earlier k blocks where beta is 1 (the last block of a GEMM in
// several), and is never read where beta is 0.
TEST(LowpEpilogueKernelTest, S8KernelsDequantizeTheTileInRegisters) {
  using Kind = S8Gemm;
  constexpr int G = Kind::kGroup;
  constexpr Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGelu,
                                         Activation::kSilu};
  constexpr BiasKind kBiasKinds[] = {BiasKind::kNone, BiasKind::kPerColumn, BiasKind::kPerRow};
  constexpr std::int32_t kCanaryBits = -123456789;
  std::mt19937_64 rng(19);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& entry : MicroKernels<Kind>(isa)) {
      if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
      ASSERT_EQ(entry.packed_epilogue == nullptr, entry.tiles) << ToString(isa) << " " << entry.mr;
      if (entry.tiles) continue;
      const int mr = entry.mr, nr = entry.nr;
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{4 * G * 2 + 3}}) {
        const TileOperands<Kind> operands(mr, nr, k, G, rng);
        std::vector<float> bias(static_cast<std::size_t>(std::max(mr, nr)));
        std::vector<float> scales(static_cast<std::size_t>(nr));
        std::vector<std::int32_t> offsets(static_cast<std::size_t>(nr));
        for (float& value : bias) value = static_cast<float>(rng() % 9) - 4.0f;
        for (int j = 0; j < nr; ++j) {
          scales[static_cast<std::size_t>(j)] = 1e-4f * static_cast<float>(1 + j % 5);
          // Every third offset near the top of the s32 range, so that sums wrap past it.
          offsets[static_cast<std::size_t>(j)] =
              j % 3 == 0 ? std::numeric_limits<std::int32_t>::max() - 1000
                         : static_cast<std::int32_t>(rng() % 2001) - 1000;
        }
        for (int m = 1; m <= mr; ++m) {
          for (int n = 1; n <= nr; ++n) {
            const int turn = cases++;
            const TileWindow window(mr, nr, m, n, turn % 5 == 4);
            std::vector<std::int32_t> c(window.storage, kCanaryBits);
            const bool earlier_blocks = turn % 2 == 1;
            const std::int32_t alpha = turn % 3 == 0 ? 1 : -3;
            std::vector<std::int32_t> old = c;
            for (int i = 0; i < m; ++i) {
              for (int j = 0; j < n; ++j) {
                const std::size_t at = window.At(i, j);
                c[at] = earlier_blocks ? static_cast<std::int32_t>(rng() % 200001) - 100000
                                       : kCanaryBits;  // unread
                old[at] = c[at];
              }
            }
            LowpMicroKernelArgs<Kind> args;
            args.groups = operands.depth / G;
            args.a = operands.packed_a.data();
            args.b = operands.packed_b.data();
            args.c = c.data() + TileWindow::kPad;
            args.row_stride = window.row_stride;
            args.col_stride = window.col_stride;
            args.m = m;
            args.n = n;
            args.alpha = alpha;
            args.beta = earlier_blocks ? 1 : 0;
            args.dequantize.scales = scales.data();
            args.dequantize.offsets = offsets.data();
            args.dequantize.output.bias = bias.data();
            args.dequantize.output.activation = kActivations[turn % 4];
            args.dequantize.output.bias_kind = kBiasKinds[turn / 4 % 3];
            entry.packed_epilogue(args);
            const TileEpilogue<float>& e = args.dequantize.output;
            const std::string what = window.Describe(isa, mr, nr, entry.k_unroll, k, e);
            for (std::size_t at = 0; at < c.size(); ++at) {
              std::int64_t i = 0, j = 0;
              if (!window.Locate(at, i, j)) {
                ASSERT_EQ(c[at], kCanaryBits) << what << " wrote storage element " << at;
                continue;
              }
              std::int64_t sum = 0;
              for (std::int64_t p = 0; p < k; ++p) {
                sum += std::int64_t{operands.a[static_cast<std::size_t>(i * k + p)]} *
                       std::int64_t{operands.b[static_cast<std::size_t>(p * nr + j)]};
              }
              const auto column = static_cast<std::size_t>(j);
              const std::uint32_t earlier =
                  earlier_blocks ? static_cast<std::uint32_t>(old[at]) : 0u;
              const auto wrapped = static_cast<std::int32_t>(
                  static_cast<std::uint32_t>(alpha) * static_cast<std::uint32_t>(sum) + earlier +
                  static_cast<std::uint32_t>(offsets[column]));
              const double added = e.bias_kind == BiasKind::kPerColumn ? e.bias[j]
                                   : e.bias_kind == BiasKind::kPerRow  ? e.bias[i]
                                                                       : 0.0;
              const double value = static_cast<double>(scales[column]) * wrapped + added;
              const double want = ReferenceActivation(e.activation, value);
              float got = 0.0f;
              std::memcpy(&got, &c[at], sizeof got);
              ASSERT_NEAR(got, want, 1e-6 * (std::abs(value) + 1) + 2e-5 * std::abs(want))
                  << what << " (" << i << ", " << j << ")";
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

template <class Kind>
KernelConfig GemvConfig(const LowpGemvKernelEntry<Kind>& entry, int threads) {
  KernelConfig c;
  c.family = KernelFamily::kGemv;
  c.isa = entry.isa;
  c.mr = entry.mr;
  c.nr = entry.nr;
  c.threads = threads;
  return c;
}

// A random, valid config for an m x n x k problem at `isa`: for M = 1 or N = 1 a gemv kernel
// half of the time, else packed with blocks small and large so that small shapes cross several
// block boundaries too.
template <class Kind>
KernelConfig RandomConfig(IsaLevel isa, std::int64_t m, std::int64_t n, std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  if ((m == 1 || n == 1) && pick(0, 1) == 1) {
    const auto gemvs = GemvKernels<Kind>(isa);
    return GemvConfig(gemvs[static_cast<std::size_t>(pick(0, static_cast<int>(gemvs.size()) - 1))],
                      pick(1, 2));
  }
  std::vector<const LowpMicroKernelEntry<Kind>*> kernels;
  for (const auto& entry : MicroKernels<Kind>(isa)) {
    if (CpuRunsLowpKernel(HostCpuFeatures(), entry)) kernels.push_back(&entry);
  }
  const auto& entry =
      *kernels[static_cast<std::size_t>(pick(0, static_cast<int>(kernels.size()) - 1))];
  KernelConfig c = PackedConfigOf(isa, entry);
  c.threads = pick(1, 2);
  constexpr ParallelLoop kLoops[] = {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr,
                                     ParallelLoop::kIcOwnB};
  c.parallel_loop = kLoops[pick(0, 3)];
  c.prefetch_a = pick(0, 1) * pick(1, 16);
  c.prefetch_b = pick(0, 1) * pick(1, 16);
  c.prefetch_c = pick(0, 1) == 1;
  c.kc = Kind::kGroup * (pick(0, 1) == 0 ? pick(1, 8) : pick(16, 128));
  c.kc = (c.kc + entry.a_group - 1) / entry.a_group * entry.a_group;  // whole AMX tile rows
  c.mc = c.mr * (pick(0, 1) == 0 ? pick(1, 3) : static_cast<int>(std::max<std::int64_t>(1, m / c.mr + 1)));
  c.nc = c.nr * (pick(0, 1) == 0 ? pick(1, 2) : static_cast<int>(std::max<std::int64_t>(1, n / c.nr + 1)));
  c.a_in_place = c.parallel_loop != ParallelLoop::kJr && pick(0, 1) == 1;
  c.c_buffer = entry.tiles && pick(0, 1) == 1;
  return c;
}

TYPED_TEST(LowpGemmTest, RandomConfigsMatchTheReference) {
  using Kind = TypeParam;
  std::mt19937_64 rng(17);
  const std::vector<std::array<std::int64_t, 3>> shapes = {
      {1, 1, 1}, {1, 17, 9}, {13, 1, 7}, {2, 3, 5}, {7, 31, 33}, {16, 16, 16},
      {17, 15, 3}, {29, 67, 61}, {64, 48, 130}, {97, 101, 103}};
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor};
  const Trans transes[] = {Trans::kNo, Trans::kYes};
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& [m, n, k] : shapes) {
      for (int variant = 0; variant < 8; ++variant) {
        const Layout layout = layouts[variant % 2];
        const Trans ta = transes[(variant / 2) % 2];
        const Trans tb = transes[(variant / 4) % 2];
        // alpha/beta: 1/0 with NaN in C, -1.5/1 (s8: -3/1), random, and 1/-1.
        const int ab = (variant + static_cast<int>(m)) % 4;
        double alpha = 1, beta = 0;
        bool nan_c = false;
        if (ab == 0) nan_c = std::is_same_v<Kind, Bf16Gemm>;
        if (ab == 1) { alpha = std::is_same_v<Kind, Bf16Gemm> ? -1.5 : -3; beta = 1; }
        if (ab == 2) { alpha = std::uniform_int_distribution<int>(-5, 5)(rng); beta = 2; }
        if (ab == 3) { beta = -1; }
        const std::int64_t extra_ld = variant % 3 == 0 ? 3 : 0;
        LowpCase<Kind> lc = MakeCase<Kind>(layout, ta, tb, m, n, k, ScalarFrom<Kind>(alpha),
                                           ScalarFrom<Kind>(beta), extra_ld, nan_c, rng);
        ASSERT_TRUE(RunsCorrectly(lc, RandomConfig<Kind>(isa, m, n, rng)));
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// Every gemv kernel of every runnable ISA (GemvKernelTables) through the gemv driver, in every
// orientation (M = 1 or N = 1, both layouts, all transposes: the dot and the axpy form, a
// strided vector), with k and the output length below, at and past whole vector steps and the
// kernel's row blocks, padded leading dimensions, alpha/beta variants, NaN in C with beta = 0,
// one and two threads.
TYPED_TEST(LowpGemmTest, EveryGemvKernelInEveryOrientation) {
  using Kind = TypeParam;
  constexpr int G = Kind::kGroup;
  std::mt19937_64 rng(41);
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor};
  const Trans transes[] = {Trans::kNo, Trans::kYes};
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& table : GemvKernelTables<Kind>(isa)) {
      const bool served = table.data() == GemvKernels<Kind>(isa).data();
      for (const auto& entry : table) {
        const std::int64_t step = entry.nr * G;  // k values of the dot form's unrolled step
        const std::int64_t lanes = entry.nr;     // outputs of the axpy form's unrolled step
        const std::vector<std::array<std::int64_t, 2>> lengths_and_depths = {
            {1, 1},
            {lanes - 1, step - 1},
            {lanes, step},
            {2 * lanes + 3, 2 * step + G + 1},
            {entry.mr * 3 + 1, 3 * step + 5},
            {37, 7}};
        for (std::size_t s = 0; s < lengths_and_depths.size(); ++s) {
          const auto [len, k] = lengths_and_depths[s];
          for (int variant = 0; variant < 16; ++variant) {
            const bool vector_a = variant % 2 == 0;
            const std::int64_t m = vector_a ? 1 : len;
            const std::int64_t n = vector_a ? len : 1;
            const Layout layout = layouts[(variant / 2) % 2];
            const Trans ta = transes[(variant / 4) % 2];
            const Trans tb = transes[(variant / 8) % 2];
            const int ab = (variant + static_cast<int>(s)) % 3;
            const bool nan_c = ab == 0 && std::is_same_v<Kind, Bf16Gemm>;
            const double alpha = ab == 1 ? -3 : 1;
            const double beta = ab == 0 ? 0 : ab == 1 ? 1 : 2;
            LowpCase<Kind> lc = MakeCase<Kind>(layout, ta, tb, m, n, k, ScalarFrom<Kind>(alpha),
                                               ScalarFrom<Kind>(beta), variant % 3 == 0 ? 5 : 0,
                                               nan_c, rng);
            const KernelConfig config = GemvConfig(entry, 1 + variant % 2);
            ASSERT_TRUE(served ? RunsCorrectly(lc, config)
                               : GemvEntryRunsCorrectly(lc, config, entry));
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// A gemv plan refuses a shape with M > 1 and N > 1 and writes nothing.
TYPED_TEST(LowpGemmTest, GemvPlanRejectsMatrixShapes) {
  using Kind = TypeParam;
  std::mt19937_64 rng(43);
  const auto gemvs = GemvKernels<Kind>(IsaLevel::kGeneric);
  ASSERT_FALSE(gemvs.empty());
  auto plan = GemmPlan<Kind>::Create(GemvConfig(gemvs[0], 1));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  LowpCase<Kind> lc = MakeCase<Kind>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 3, 4,
                                     ScalarFrom<Kind>(1), ScalarFrom<Kind>(0), 0, false, rng);
  const auto before = lc.c;
  const Status status = plan->Run(lc.Bound());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("M = 1 or N = 1"), std::string::npos)
      << status.error().message;
  EXPECT_TRUE(lc.c == before);
}

// The default config for every runnable ISA cap is valid and correct, across shapes and
// thread counts, including blocks larger than the caches.
TYPED_TEST(LowpGemmTest, DefaultConfigIsValidAndCorrect) {
  using Kind = TypeParam;
  std::mt19937_64 rng(23);
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  for (IsaLevel isa : RunnableLevels()) {
    const Machine machine = DescribeMachine(host->cpu, host->topology, isa);
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {1, 1, 1}, {1, 300, 200}, {200, 1, 300}, {33, 400, 17}, {150, 260, 1100}}) {
      for (int threads : {1, 2}) {
        const Problem problem{Kind::kDType, Layout::kColMajor, Trans::kYes, Trans::kNo, m, n, k,
                              threads};
        const KernelConfig config = ModelConfig(problem, machine);
        const Status valid = config.Validate(problem, machine);
        ASSERT_TRUE(valid.ok()) << problem.ToString() << " " << config.ToString() << ": "
                                << valid.error().message;
        LowpCase<Kind> lc = MakeCase<Kind>(Layout::kColMajor, Trans::kYes, Trans::kNo, m, n, k,
                                           ScalarFrom<Kind>(-1), ScalarFrom<Kind>(1), 2, false,
                                           rng);
        auto plan = GemmPlan<Kind>::Create(config);
        ASSERT_TRUE(plan.ok()) << config.ToString() << ": " << plan.error().message;
        ASSERT_TRUE(plan->Run(lc.Bound()).ok());
        if (CheckResult(lc, config.ToString()) > 0) return;
      }
    }
  }
}

// Whether `host` runs Kind's AMX tile kernels at its kernel ISA level.
template <class Kind>
bool RunsTiles(const Machine& host) {
  return host.kernel_isa == IsaLevel::kAvx512 && CpuRunsLowp<Kind>(host.cpu, IsaLevel::kAvx512) &&
         CpuRunsLowpTiles<Kind>(host.cpu);
}

// Where the CPU has AMX for the type, the default of a matrix shape runs a tile kernel, with kc
// in whole tile rows, 16 rows tall where M is that short, and matches the reference.
TYPED_TEST(LowpGemmTest, DefaultRunsTileKernelsWhereTheCpuHasAmx) {
  using Kind = TypeParam;
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  if (!RunsTiles<Kind>(*host)) GTEST_SKIP() << "no AMX for " << ToString(Kind::kDType) << " here";
  std::mt19937_64 rng(29);
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {8, 300, 200}, {16, 64, 64}, {128, 768, 768}, {97, 101, 1003}}) {
    const Problem problem{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1};
    const KernelConfig config = ModelConfig(problem, *host);
    const auto* kernel = FindMicroKernel<Kind>(config.isa, config.mr, config.nr, config.k_unroll);
    ASSERT_NE(kernel, nullptr) << config.ToString();
    EXPECT_TRUE(kernel->tiles) << problem.ToString() << " " << config.ToString();
    EXPECT_EQ(config.kc % kernel->a_group, 0) << config.ToString();
    if (m <= 16) {
      EXPECT_EQ(config.mr, 16) << config.ToString();
    }
    LowpCase<Kind> lc = MakeCase<Kind>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                       ScalarFrom<Kind>(3), ScalarFrom<Kind>(0), 1, true, rng);
    auto plan = GemmPlan<Kind>::Create(config);
    ASSERT_TRUE(plan.ok()) << config.ToString() << ": " << plan.error().message;
    ASSERT_TRUE(plan->Run(lc.Bound()).ok());
    EXPECT_EQ(CheckResult(lc, config.ToString()), 0);
  }
}

// Where the CPU has AMX for the type, the default's blocks are the tile kernels' (TileKcModel and
// the others): the B micro-panel in 2/3 of L1, the packed A block in L2 / 8 and the packed B
// block in half of L2 (each may exceed its share by less than one tile, as the even split of
// BalancedBlock allows), and K split evenly into as few blocks as the panel allows; a
// k-contiguous A is read in place; the tile is the one with the most C tiles that M needs
// (16x48 under 32 rows, else 32x32) but from K = 256 on for bf16 and 384 for s8 (16x32,
// kAmxLongKTiles); two threads split the columns (TileParallelLoop).
TYPED_TEST(LowpGemmTest, TileDefaultsKeepTheirBlocksInL1AndL2) {
  using Kind = TypeParam;
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  if (!RunsTiles<Kind>(*host)) GTEST_SKIP() << "no AMX for " << ToString(Kind::kDType) << " here";
  const CacheBudget cache = CacheBudgetOf(*host);
  const auto l1 = static_cast<std::int64_t>(cache.l1d);
  const auto l2 = static_cast<std::int64_t>(cache.l2);
  constexpr std::int64_t a_elem = sizeof(typename Kind::A), b_elem = sizeof(typename Kind::B);
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {128, 768, 768}, {128, 3072, 768}, {1024, 1024, 1024}, {196, 256, 2304},
           {97, 101, 1003}, {4096, 4096, 8192}, {128, 128, 128}, {64, 512, 255}, {16, 768, 768},
           {31, 96, 4096}, {256, 256, 384}, {256, 256, 383}}) {
    const Problem problem{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1};
    const KernelConfig c = ModelConfig(problem, *host);
    const auto* kernel = FindMicroKernel<Kind>(c.isa, c.mr, c.nr, c.k_unroll);
    ASSERT_NE(kernel, nullptr) << c.ToString();
    ASSERT_TRUE(kernel->tiles) << c.ToString();
    const std::string what = problem.ToString() + " " + c.ToString();
    EXPECT_LE(c.kc * c.nr * b_elem, l1 * 2 / 3) << what;
    EXPECT_LT(c.mc * c.kc * a_elem, l2 / 8 + c.mr * c.kc * a_elem) << what;
    EXPECT_LT(c.kc * c.nc * b_elem, l2 / 2 + c.kc * c.nr * b_elem) << what;
    // As few k blocks as that panel allows, each no longer than they need: one tile row less
    // would take another block.
    const std::int64_t step = kernel->a_group;
    const std::int64_t longest = l1 * 2 / 3 / (c.nr * b_elem) / step * step;
    const std::int64_t blocks = (k + c.kc - 1) / c.kc;
    EXPECT_EQ(blocks, (k + longest - 1) / longest) << what;
    EXPECT_LT(blocks * (c.kc - step), k) << what << ": k blocks of uneven length";
    EXPECT_TRUE(c.a_in_place) << what;
    EXPECT_FALSE(c.c_buffer) << what;  // one thread: C is its own
    const bool long_k = k >= (Kind::kDType == DType::kBF16 ? 256 : 384);
    const std::pair<int, int> tile = m < 32    ? std::pair{16, 48}
                                     : long_k ? std::pair{16, 32}
                                              : std::pair{32, 32};
    EXPECT_EQ(std::pair(c.mr, c.nr), tile) << what;
    const Problem a_transposed{Kind::kDType, Layout::kRowMajor, Trans::kYes, Trans::kNo, m, n, k,
                               1};
    EXPECT_FALSE(ModelConfig(a_transposed, *host).a_in_place) << a_transposed.ToString();
  }
  // Two threads split the rows (ic) where N has fewer tiles than threads. Else each thread takes
  // rows of its own and packs all of B (icown) where M is at least the k block, 128 rows a
  // thread, and B at most 3/4 of L2; else the columns (jc). icown's B block is L2 / 8. Under jc
  // with more than one k block, C's sums go through a buffer where a thread's part of a row of C
  // is shorter than a page and its block of sums at most L2 / 4.
  std::set<ParallelLoop> seen;
  std::set<bool> buffered;
  constexpr std::int64_t c_elem = sizeof(typename Kind::C);
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048},
           {128, 768, 768}, {192, 192, 192}, {256, 512, 512}, {4096, 64, 512},
           {4096, 32, 512}, {196, 256, 2304}, {128, 3072, 768}, {256, 768, 768}}) {
    const Problem problem{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 2};
    const KernelConfig c = ModelConfig(problem, *host);
    const std::string what = problem.ToString() + " " + c.ToString();
    const bool own_b = m >= c.kc && m >= 2 * 128 && 4 * k * n * b_elem <= 3 * l2;
    const ParallelLoop expected = n < 2 * c.nr ? ParallelLoop::kIc
                                  : own_b      ? ParallelLoop::kIcOwnB
                                               : ParallelLoop::kJc;
    EXPECT_EQ(c.parallel_loop, expected) << what;
    if (c.parallel_loop == ParallelLoop::kIcOwnB) {
      EXPECT_LT(c.kc * c.nc * b_elem, l2 / 8 + c.kc * c.nr * b_elem) << what;
    }
    EXPECT_TRUE(c.a_in_place) << what;
    const std::int64_t part = (n + 1) / 2;
    const bool sums_in_buffer =
        c.parallel_loop == ParallelLoop::kJc && k > c.kc && part * c_elem < 4096 &&
        4 * ((m + c.mr - 1) / c.mr * c.mr) * std::min<std::int64_t>(part, c.nc) * c_elem <= l2;
    EXPECT_EQ(c.c_buffer, sums_in_buffer) << what;
    seen.insert(c.parallel_loop);
    buffered.insert(c.c_buffer);
  }
  EXPECT_EQ(seen, (std::set<ParallelLoop>{ParallelLoop::kJc, ParallelLoop::kIc,
                                          ParallelLoop::kIcOwnB}));
  EXPECT_EQ(buffered, (std::set<bool>{false, true}));
}

// Where the CPU has AMX for the type, the items of a batch that spills L2 run tile kernels that
// prefetch the next tile's C (prefetch_c), 16x32 in place of 32x32 (kAmxColdCTile); one GEMM's
// default does not prefetch, nor does a batch that fits L2. Every tile kernel with prefetch_c
// matches the reference where the next tile is whole, an edge tile or none, over one k block and
// several, with beta 0 (the tiles that prefetch; NaN in C) and beta 1, A in place or packed.
TYPED_TEST(LowpGemmTest, TileKernelsPrefetchTheNextTileOfCForBatchesThatSpillL2) {
  using Kind = TypeParam;
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  if (!RunsTiles<Kind>(*host)) GTEST_SKIP() << "no AMX for " << ToString(Kind::kDType) << " here";
  const Problem item{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128, 128, 64, 1};
  Problem spilling = item;
  spilling.batch = 64;
  ASSERT_TRUE(BatchSpillsL2(item, spilling.batch, CacheBudgetOf(*host)));
  const KernelConfig cold = ModelConfig(spilling, *host);
  EXPECT_TRUE(cold.prefetch_c) << cold.ToString();
  EXPECT_EQ(std::pair(cold.mr, cold.nr), std::pair(16, 32)) << cold.ToString();
  const KernelConfig single = ModelConfig(item, *host);
  EXPECT_FALSE(single.prefetch_c) << single.ToString();
  EXPECT_EQ(std::pair(single.mr, single.nr), std::pair(32, 32)) << single.ToString();
  Problem fitting = item;
  fitting.batch = 2;
  ASSERT_FALSE(BatchSpillsL2(item, fitting.batch, CacheBudgetOf(*host)));
  EXPECT_FALSE(ModelConfig(fitting, *host).prefetch_c);

  std::mt19937_64 rng(41);
  int runs = 0;
  for (const auto& entry : MicroKernels<Kind>(IsaLevel::kAvx512)) {
    if (!entry.tiles || !CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {128, 128, 64}, {3 * 16, 96, 200}, {40, 70, 130}, {16, 48, 64}, {100, 32, 300}}) {
      for (const bool a_in_place : {true, false}) {
        for (const double beta : {0.0, 1.0}) {
          KernelConfig config = PackedConfigOf(IsaLevel::kAvx512, entry);
          config.prefetch_c = true;
          config.a_in_place = a_in_place;
          config.kc = entry.a_group * (k > 2 * entry.a_group ? 2 : 8);  // several blocks or one
          config.mc = entry.mr * 4;
          config.nc = entry.nr * 2;
          LowpCase<Kind> lc =
              MakeCase<Kind>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                             ScalarFrom<Kind>(1), ScalarFrom<Kind>(beta), 0,
                             beta == 0 && std::is_same_v<Kind, Bf16Gemm>, rng);
          ASSERT_TRUE(RunsCorrectly(lc, config));
          ++runs;
        }
      }
    }
  }
  EXPECT_GT(runs, 0);
}

// The paired tiles (NEON USMMLA and BFMMLA, two groups a step: PairedKLoop) through the
// driver, A packed and in place, beta 0 over NaN and beta 1, on k blocks of an odd number of
// groups, whose last group pairs with zeros, and edge tiles of odd rows and partial columns.
TYPED_TEST(LowpGemmTest, PairedTilesMatchTheReferenceOnOddGroupsAndEdges) {
  using Kind = TypeParam;
  constexpr int G = Kind::kGroup;
  std::mt19937_64 rng(43);
  int runs = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& entry : MicroKernels<Kind>(isa)) {
      if (entry.k_unroll != 2 || !CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
      for (const std::int64_t k : {std::int64_t{7 * G}, std::int64_t{10 * G + 1}}) {
        for (const bool a_in_place : {true, false}) {
          for (const double beta : {0.0, 1.0}) {
            KernelConfig config = PackedConfigOf(isa, entry);
            config.a_in_place = a_in_place;
            config.kc = 3 * G;
            config.mc = 2 * entry.mr;
            config.nc = 2 * entry.nr;
            LowpCase<Kind> lc = MakeCase<Kind>(
                Layout::kRowMajor, Trans::kNo, Trans::kNo, 2 * entry.mr + 1, entry.nr + 3, k,
                ScalarFrom<Kind>(1), ScalarFrom<Kind>(beta), 0, beta == 0, rng);
            ASSERT_TRUE(RunsCorrectly(lc, config)) << config.ToString() << " k " << k;
            ++runs;
          }
        }
      }
    }
  }
  if (runs == 0) GTEST_SKIP() << "this CPU runs no paired tiles";
}

// The packed driver's four 2-thread splits (jc; ic; jr, where both threads share the packed A
// and B blocks; icown, where each packs all of B) on blocks small enough that every loop runs
// several times, through GemmPlan::Run and through a plan bound to the shape (GemmPlan::Bind),
// both layouts.
TYPED_TEST(LowpGemmTest, EveryParallelLoopAndBoundPlansMatchTheReference) {
  using Kind = TypeParam;
  std::mt19937_64 rng(37);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    std::vector<const LowpMicroKernelEntry<Kind>*> kernels;
    for (const auto& entry : MicroKernels<Kind>(isa)) {
      if (CpuRunsLowpKernel(HostCpuFeatures(), entry)) kernels.push_back(&entry);
    }
    for (const auto* entry : {kernels.front(), kernels.back()}) {
      for (ParallelLoop loop : {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr,
                                ParallelLoop::kIcOwnB}) {
        KernelConfig c = PackedConfigOf(isa, *entry);
        c.threads = 2;
        c.parallel_loop = loop;
        c.kc = std::max(8 * Kind::kGroup, entry->a_group);
        c.mc = 2 * c.mr;
        c.nc = 2 * c.nr;
        for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
          LowpCase<Kind> lc = MakeCase<Kind>(layout, Trans::kNo, Trans::kYes, 97, 101, 103,
                                             ScalarFrom<Kind>(-1), ScalarFrom<Kind>(2), 1, false,
                                             rng);
          const auto initial = lc.c;
          ASSERT_TRUE(RunsCorrectly(lc, c));
          auto plan = GemmPlan<Kind>::Create(c);
          ASSERT_TRUE(plan.ok());
          auto bound = plan->Bind(lc.Bound());
          ASSERT_TRUE(bound.ok()) << bound.error().message;
          lc.c = initial;
          const GemmArgs<Kind> args = lc.Bound();
          ASSERT_TRUE(bound->Run(args.a, args.b, args.c).ok());
          EXPECT_EQ(CheckResult(lc, "bound " + c.ToString()), 0);
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// Every tile kernel (AMX) where it keeps whole tiles of C in its tile registers between k blocks
// (alpha 1, beta 0 or 1, row-major C whose rows start on cache lines: loaded from C and stored
// back in place) and where it does not (other alpha and beta, a column-major C, rows across
// cache lines): several k blocks, whole and edge tiles, NaN in C with beta = 0. And the same with
// the k blocks but the last accumulating in a thread's buffer of sums (cbuf), on one thread and
// on two of every split.
TYPED_TEST(LowpGemmTest, TileKernelsKeepWholeTilesOfCAcrossKBlocks) {
  using Kind = TypeParam;
  std::mt19937_64 rng(41);
  int cases = 0;
  struct Variant {
    bool c_buffer;
    int threads;
    ParallelLoop loop;
  };
  const Variant variants[] = {{false, 1, ParallelLoop::kJc}, {true, 1, ParallelLoop::kJc},
                              {true, 2, ParallelLoop::kJc},  {true, 2, ParallelLoop::kIc},
                              {true, 2, ParallelLoop::kJr},  {true, 2, ParallelLoop::kIcOwnB}};
  for (const auto& entry : MicroKernels<Kind>(IsaLevel::kAvx512)) {
    if (!entry.tiles || !CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
    for (const Variant& variant : variants) {
      KernelConfig c = PackedConfigOf(IsaLevel::kAvx512, entry);
      c.kc = entry.a_group;
      c.mc = 2 * c.mr;
      c.nc = 2 * c.nr;
      c.c_buffer = variant.c_buffer;
      c.threads = variant.threads;
      c.parallel_loop = variant.loop;
      const std::int64_t m = 2 * c.mr + 1, n = 2 * c.nr + 3, k = 3 * c.kc + 5;
      for (const auto& [alpha, beta] :
           std::vector<std::array<double, 2>>{{1, 0}, {1, 1}, {2, 1}, {1, -1}}) {
        for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
          // C's rows on cache lines (ldc a multiple of 16 elements) or straddling them.
          const std::int64_t past_line = (layout == Layout::kRowMajor ? n : m) % 16;
          for (const std::int64_t extra_ld : {16 - past_line, std::int64_t{3}}) {
            const bool nan_c = beta == 0 && std::is_same_v<Kind, Bf16Gemm>;
            LowpCase<Kind> lc =
                MakeCase<Kind>(layout, Trans::kNo, Trans::kNo, m, n, k, ScalarFrom<Kind>(alpha),
                               ScalarFrom<Kind>(beta), extra_ld, nan_c, rng);
            ASSERT_TRUE(RunsCorrectly(lc, c));
            ++cases;
          }
        }
      }
    }
  }
  if (cases == 0) GTEST_SKIP() << "no AMX for " << ToString(Kind::kDType) << " here";
}

// Every kernel reading A in place (vector kernels in groups, tile kernels in runs of a tile
// row, where A's rows start on cache lines): whole tiles from A, the edge tile's rows and a k
// block ending inside a group or a run packed (A's padding is random: a read past a row would
// show), k blocks after the first accumulating, padded leading dimensions, both layouts
// (column-major reads A in place where it is transposed), one thread and two splitting jc or ic.
TYPED_TEST(LowpGemmTest, EveryKernelReadsAInPlace) {
  using Kind = TypeParam;
  std::mt19937_64 rng(41);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& entry : MicroKernels<Kind>(isa)) {
      if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
      KernelConfig c = PackedConfigOf(isa, entry);
      c.kc = entry.tiles ? 2 * entry.a_group : 4 * Kind::kGroup * entry.k_unroll;
      c.mc = 2 * c.mr;
      c.nc = c.nr;
      c.a_in_place = true;
      // Rows: two whole blocks and an edge tile; k: two whole blocks, then one ending inside a
      // group (packed), one of two groups (inside a tile row's run: packed for tile kernels),
      // one of a run, or whole blocks only (every block in place).
      const std::int64_t m = 4 * entry.mr + 1;
      const std::int64_t n = entry.nr + 3;
      const std::int64_t kc = c.kc;
      for (const std::int64_t k : {2 * kc + Kind::kGroup + 1, 2 * kc + 2 * Kind::kGroup,
                                   2 * kc + entry.a_group, 3 * kc}) {
        for (const auto& [threads, loop] : {std::pair{1, ParallelLoop::kJc},
                                            std::pair{2, ParallelLoop::kJc},
                                            std::pair{2, ParallelLoop::kIc}}) {
          c.threads = threads;
          c.parallel_loop = loop;
          // A's rows 5 elements past a whole row, and (tile kernels, which read A in place
          // only there) rows starting on cache lines, one line past a whole row.
          const std::int64_t line = kCacheLineBytes / std::int64_t{sizeof(typename Kind::A)};
          const std::int64_t on_lines = (k + line - 1) / line * line + line - k;
          for (const auto& [layout, extra_ld] : {std::pair{Layout::kRowMajor, std::int64_t{5}},
                                                 std::pair{Layout::kColMajor, std::int64_t{5}},
                                                 std::pair{Layout::kRowMajor, on_lines},
                                                 std::pair{Layout::kColMajor, on_lines}}) {
            if (extra_ld == on_lines && !entry.tiles) continue;
            const Trans ta = layout == Layout::kRowMajor ? Trans::kNo : Trans::kYes;
            LowpCase<Kind> lc = MakeCase<Kind>(layout, ta, Trans::kNo, m, n, k,
                                               ScalarFrom<Kind>(-1), ScalarFrom<Kind>(2),
                                               extra_ld, false, rng);
            if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
              // NaN around bf16 A: a partial group read in place would meet B's zero padding
              // with it, and NaN * 0 shows where a random value times 0 would not.
              std::vector<bool> inside(lc.a.size(), false);
              for (std::int64_t i = 0; i < m; ++i) {
                for (std::int64_t p = 0; p < k; ++p) {
                  inside[static_cast<std::size_t>(LowpCase<Kind>::kPad +
                                                  StoredOffset(layout, p, i, lc.args.lda) *
                                                      (ta == Trans::kYes) +
                                                  StoredOffset(layout, i, p, lc.args.lda) *
                                                      (ta == Trans::kNo))] = true;
                }
              }
              for (std::size_t e = 0; e < lc.a.size(); ++e) {
                if (!inside[e]) lc.a[e] = ToBFloat16(std::numeric_limits<float>::quiet_NaN());
              }
            }
            ASSERT_TRUE(RunsCorrectly(lc, c));
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// A vector kernel's partial row panel runs in the snug kernel of its rows (SnugTiles: the same
// k unroll, A group and kind of registers, no taller, the fewest accumulators), its A packed
// that tall: every kernel with each remainder of rows (one row: EveryKernelReadsAInPlace), on
// every parallel loop on two threads, each with A packed (by rows or transposed) or read in
// place, one k block or several, drawn independently, against the reference.
TYPED_TEST(LowpGemmTest, EveryKernelRunsPartialRowsInTheKernelOfTheirRows) {
  using Kind = TypeParam;
  std::mt19937_64 rng(43);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<Kind>(isa)) continue;
    for (const auto& entry : MicroKernels<Kind>(isa)) {
      if (!CpuRunsLowpKernel(HostCpuFeatures(), entry)) continue;
      const SnugTiles<Kind>& snug = SnugTiles<Kind>::Of(entry);
      for (int rows = 1; rows <= entry.mr; ++rows) {
        const auto& tile = snug.For(rows, entry.nr);
        ASSERT_TRUE(tile.mr >= rows && tile.mr <= entry.mr && tile.nr == entry.nr &&
                    tile.k_unroll == entry.k_unroll && tile.a_group == entry.a_group &&
                    tile.tiles == entry.tiles)
            << ToString(isa) << " " << entry.mr << "x" << entry.nr << " at " << rows << " rows";
      }
      if (entry.tiles) continue;
      for (const int rows_left : {entry.mr - 1, (entry.mr + 1) / 2}) {
        if (rows_left < 2) continue;
        for (ParallelLoop loop :
             {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr, ParallelLoop::kIcOwnB}) {
          auto coin = [&] { return rng() % 2 == 0; };
          KernelConfig c = PackedConfigOf(isa, entry);
          c.kc = 4 * Kind::kGroup * entry.k_unroll;
          c.mc = (coin() ? 2 : 3) * c.mr;
          c.nc = c.nr;
          c.threads = 2;
          c.parallel_loop = loop;
          c.a_in_place = loop != ParallelLoop::kJr && coin();
          const std::int64_t m = 2 * entry.mr + rows_left;
          const std::int64_t n = entry.nr + 3;
          const std::int64_t k = coin() ? 2 * c.kc + Kind::kGroup + 1 : c.kc - Kind::kGroup;
          const Trans ta = coin() ? Trans::kNo : Trans::kYes;
          LowpCase<Kind> lc = MakeCase<Kind>(Layout::kRowMajor, ta, Trans::kNo, m, n, k,
                                             ScalarFrom<Kind>(-1), ScalarFrom<Kind>(2),
                                             coin() ? 5 : 0, false, rng);
          ASSERT_TRUE(RunsCorrectly(lc, c));
          ++cases;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

TYPED_TEST(LowpGemmTest, EmptyAndScaleOnlyProblems) {
  using Kind = TypeParam;
  std::mt19937_64 rng(29);
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  for (const auto& [m, n, k, alpha] : std::vector<std::array<std::int64_t, 4>>{
           {0, 5, 5, 1}, {5, 0, 5, 1}, {5, 7, 0, 1}, {6, 4, 9, 0}}) {
    const Problem problem{Kind::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1};
    LowpCase<Kind> lc = MakeCase<Kind>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                       ScalarFrom<Kind>(static_cast<double>(alpha)),
                                       ScalarFrom<Kind>(3), 1, false, rng);
    auto plan = GemmPlan<Kind>::Create(ModelConfig(problem, *host));
    ASSERT_TRUE(plan.ok());
    ASSERT_TRUE(plan->Run(lc.Bound()).ok());
    EXPECT_EQ(CheckResult(lc, "scale only"), 0);
  }
}

TEST(LowpS8Test, ExtremeValuesAreExactAndWrapModulo2To32) {
  // 255 * 127 + 255 * 127 overflows 16 bits: a kernel that saturates pairs (VPMADDUBSW) fails
  // here. alpha = 2^20 makes the s32 result wrap, which must match the reference bit for bit.
  std::mt19937_64 rng(31);
  for (IsaLevel isa : RunnableLevels()) {
    if (!Runnable<S8Gemm>(isa)) continue;
    for (std::int32_t alpha : {1, 1 << 20}) {
      LowpCase<S8Gemm> lc = MakeCase<S8Gemm>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 40,
                                             301, alpha, 0, 0, false, rng);
      for (std::size_t i = 0; i < lc.a.size(); ++i) lc.a[i] = 255;
      for (std::size_t i = 0; i < lc.b.size(); ++i) lc.b[i] = i % 3 == 0 ? -128 : 127;
      lc.expected = lc.c;
      GemmArgs<S8Gemm> reference = lc.Bound();
      reference.c = lc.expected.data() + LowpCase<S8Gemm>::kPad;
      ASSERT_TRUE(ReferenceLowpGemm<S8Gemm>(reference).ok());
      Problem problem{DType::kS8, Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 40, 301, 1};
      auto host = DetectHostMachine();
      ASSERT_TRUE(host.ok());
      KernelConfig config = ModelConfig(problem, DescribeMachine(host->cpu, host->topology, isa));
      auto plan = GemmPlan<S8Gemm>::Create(config);
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      ASSERT_TRUE(plan->Run(lc.Bound()).ok());
      EXPECT_EQ(CheckResult(lc, std::string(ToString(isa)) + " extreme"), 0);
    }
  }
}

TEST(LowpConfigTest, RejectsWhatTheLowPrecisionKernelsCannotRun) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  const Problem problem{DType::kBF16, Layout::kRowMajor, Trans::kNo, Trans::kNo, 64, 64, 64, 1};
  const KernelConfig good = ModelConfig(problem, *host);
  ASSERT_TRUE(good.Validate(problem, *host).ok());
  auto expect_error = [&](KernelConfig config, DType dtype, const std::string& words) {
    const Status status = config.ValidateFor(dtype);
    ASSERT_FALSE(status.ok()) << config.ToString();
    EXPECT_NE(status.error().message.find(words), std::string::npos) << status.error().message;
    if (dtype == DType::kBF16) {
      EXPECT_FALSE(GemmPlan<Bf16Gemm>::Create(config).ok());
    }
  };
  KernelConfig c = good;
  c.family = KernelFamily::kDirect;
  expect_error(c, DType::kBF16, "packed and gemv families only");
  c = good;
  c.a_in_place = false;
  c.parallel_loop = ParallelLoop::kJr;  // the packed driver's jr split serves every dtype
  EXPECT_TRUE(c.ValidateFor(DType::kBF16).ok());
  // A read in place: by the packed kernels (an AVX2 one here: every host has those; the tile
  // kernels' own test runs them), not where jr's threads share the packed A block.
  c = PackedConfigOf(IsaLevel::kAvx2, MicroKernels<Bf16Gemm>(IsaLevel::kAvx2)[0]);
  c.kc = good.kc;
  c.mc = c.mr;
  c.nc = c.nr;
  c.a_in_place = true;
  EXPECT_TRUE(c.ValidateFor(DType::kBF16).ok()) << c.ToString();
  c.family = KernelFamily::kGemv;
  expect_error(c, DType::kBF16, "packed family only");
  c.family = KernelFamily::kPacked;
  c.parallel_loop = ParallelLoop::kJr;
  expect_error(c, DType::kBF16, "no ainplace with jr");
  c = good;
  c.kc = 4 * 3 + 1;
  expect_error(c, DType::kBF16, "multiple of 2");
  c.kc = 4 * 3 + 2;
  expect_error(c, DType::kS8, "multiple of 4");
  c = good;
  c.mr = 6;  // the f32 AVX2 tile 6x16 has too many registers for the widened bf16 operands
  c.nr = 16;
  c.mc = 6 * 4;
  c.isa = IsaLevel::kAvx2;
  expect_error(c, DType::kBF16, "micro-kernel");

  // AVX-512 kernels need the dot-product extensions as well as the ISA level.
  Machine without = *host;
  without.kernel_isa = IsaLevel::kAvx512;
  without.cpu.avx512_bf16 = false;
  without.cpu.avx512_vnni = false;
  for (DType dtype : {DType::kBF16, DType::kS8}) {
    const Problem p{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, 64, 64, 64, 1};
    const KernelConfig fallback = ModelConfig(p, without);
    EXPECT_EQ(fallback.isa, IsaLevel::kAvx2) << ToString(dtype);
    EXPECT_TRUE(fallback.Validate(p, without).ok());
    KernelConfig native = fallback;
    native.isa = IsaLevel::kAvx512;
    native.mr = 8;
    native.nr = 32;
    native.mc = 64;
    native.nc = 64;
    const Status status = native.Validate(p, without);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message.find(dtype == DType::kBF16 ? "AVX512_BF16" : "AVX512_VNNI"),
              std::string::npos)
        << status.error().message;
  }
  if (!HostCpuFeatures().avx512_bf16) {
    KernelConfig native = good;
    native.isa = IsaLevel::kAvx512;
    native.mr = 8;
    native.nr = 32;
    native.mc = 64;
    native.nc = 64;
    auto plan = GemmPlan<Bf16Gemm>::Create(native);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.error().code, ErrorCode::kUnsupported);
  }
}

}  // namespace
}  // namespace mmtune
