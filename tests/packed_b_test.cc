// B packed once (GemmPlan::PackB) and run many times: every packed micro-kernel this CPU runs,
// both layouts, every transpose pair, edge shapes, several k / column / row blocks, one and two
// threads on each parallel loop, alpha / beta with NaN in C under beta = 0. Operands are small
// integers, so every dtype's result is exact and compared element by element with a reference
// computed here; canaries around C catch writes outside it, and B is overwritten after packing,
// so a run that still read B would show. Mismatched packings are refused with an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/gemm_args.h"
#include "kernels/gemm_internal.h"
#include "kernels/microkernel.h"
#include "kernels/packed_b.h"
#include "mmtune/bf16.h"
#include "gemm_test_util.h"
#include "small_integers.h"
#include "synthetic_machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

constexpr std::int64_t kPad = 16;  // canary elements before and after C

template <typename X>
using CType = typename GemmTypes<X>::C;

template <typename X>
constexpr CType<X> kCanary = CType<X>(-7777);

using testing::FromInt;
using testing::MakeStored;
using testing::Stored;
using testing::ToDouble;

template <typename X>
struct Problem3 {
  Layout layout;
  Trans ta;
  Trans tb;
  std::int64_t m, n, k;
  typename GemmTypes<X>::Scalar alpha, beta;
};

// Runs `runner` on `p` with B packed by `packer` and checks C exactly, canaries included.
template <typename X>
void ExpectPackedRunExact(const GemmPlan<X>& packer, const GemmPlan<X>& runner,
                          const Problem3<X>& p, std::mt19937& rng) {
  using C = CType<X>;
  const Stored<typename GemmTypes<X>::A> a = MakeStored<typename GemmTypes<X>::A>(
      p.layout, p.ta, p.m, p.k, rng);
  Stored<typename GemmTypes<X>::B> b =
      MakeStored<typename GemmTypes<X>::B>(p.layout, p.tb, p.k, p.n, rng);
  const std::int64_t ldc = MinLeadingDimension(p.layout, Trans::kNo, p.m, p.n) + 2;
  const std::int64_t outer = p.layout == Layout::kRowMajor ? p.m : p.n;
  std::vector<C> c(static_cast<std::size_t>(outer * ldc + 2 * kPad), kCanary<X>);
  std::vector<C> expected = c;
  std::uniform_int_distribution<int> small(-3, 3);
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      const auto at = static_cast<std::size_t>(kPad + StoredOffset(p.layout, i, j, ldc));
      const C old = p.beta == 0 && std::is_floating_point_v<C>
                        ? std::numeric_limits<C>::quiet_NaN()
                        : static_cast<C>(small(rng));
      c[at] = old;
      double sum = 0;
      for (std::int64_t q = 0; q < p.k; ++q) sum += a.At(i, q) * b.At(q, j);
      double value = static_cast<double>(p.alpha) * sum;
      if (p.beta != 0) value += static_cast<double>(p.beta) * static_cast<double>(old);
      expected[at] = static_cast<C>(value);
    }
  }
  auto packed = packer.PackB(p.layout, p.tb, p.n, p.k, b.values.data(), b.ld);
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  for (auto& v : b.values) v = FromInt<typename GemmTypes<X>::B>(99);  // a read of B shows
  const GemmArgs<X> args{p.layout, p.ta,    p.tb,   p.m, p.n,    p.k,
                         p.alpha,  a.values.data(), a.ld, nullptr, 0, p.beta, c.data() + kPad,
                         ldc, {}};
  const Status status = runner.Run(args, *packed, testing::TwoMembers());
  ASSERT_TRUE(status.ok()) << status.error().message;
  int bad = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] != expected[i] && bad++ < 3) {
      ADD_FAILURE() << "C storage element " << static_cast<std::int64_t>(i) - kPad << ": got "
                    << c[i] << ", expected " << expected[i];
    }
  }
  EXPECT_EQ(bad, 0);
}

// Packed configs of every micro-kernel this CPU runs: k blocks of 16 (or a tile row), and
// blocks of two tiles, so that small problems cross k, row and column blocks.
template <typename X>
std::vector<KernelConfig> RunnablePackedConfigs() {
  std::vector<KernelConfig> configs;
  for (IsaLevel isa : kIsaLevels) {
    for (const auto& entry : MicroKernels<X>(isa)) {
      KernelConfig c = testing::PackedConfigOf(isa, entry);
      const int ag = detail::AGroupOf<X>(entry);
      c.kc = static_cast<int>((16 + ag - 1) / ag * ag);
      c.mc = 2 * entry.mr;
      c.nc = 2 * entry.nr;
      if (GemmPlan<X>::Create(c).ok()) configs.push_back(c);
    }
  }
  return configs;
}

template <typename X>
void CheckEveryKernel() {
  std::mt19937 rng(11);
  const auto configs = RunnablePackedConfigs<X>();
  ASSERT_FALSE(configs.empty());
  for (KernelConfig config : configs) {
    // Shapes: single elements, primes, and one past two blocks in every dimension.
    const std::int64_t big_m = 2 * config.mc + 1;
    const std::int64_t big_n = 2 * config.nc + 1;
    const std::int64_t big_k = 2 * config.kc + 3;
    const std::int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 17}, {big_m, big_n, big_k}};
    struct Split {
      int threads;
      ParallelLoop loop;
    };
    // A read in place (where k-contiguous) by every split but jr, whose threads share A's panels.
    for (const Split split : {Split{1, ParallelLoop::kJc}, Split{2, ParallelLoop::kJc},
                              Split{2, ParallelLoop::kIc}, Split{2, ParallelLoop::kJr},
                              Split{2, ParallelLoop::kIcOwnB}}) {
      config.threads = split.threads;
      config.parallel_loop = split.loop;
      config.a_in_place = split.loop != ParallelLoop::kJr;
      auto plan = GemmPlan<X>::Create(config);
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      for (const auto& shape : shapes) {
        for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
          for (Trans ta : {Trans::kNo, Trans::kYes}) {
            for (Trans tb : {Trans::kNo, Trans::kYes}) {
              const bool plain = shape[0] != big_m;
              using Scalar = typename GemmTypes<X>::Scalar;
              const Problem3<X> p{layout,   ta,       tb,
                                  shape[0], shape[1], shape[2],
                                  Scalar(plain ? 1 : 2), Scalar(plain ? 0 : -1)};
              SCOPED_TRACE(config.ToString() + " " + ToString(layout) + " " +
                           TransPairToString(ta, tb) + " " + std::to_string(p.m) + "x" +
                           std::to_string(p.n) + "x" + std::to_string(p.k));
              ExpectPackedRunExact(*plan, *plan, p, rng);
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      }
    }
  }
}

// Every config PanelConfigs offers reads the panels and runs exactly, whatever the rows: fewer
// than the tile, more, and multiples of it, on one and two threads.
template <typename X>
void CheckPanelConfigs() {
  std::mt19937 rng(5);
  const Machine machine = testing::SyntheticZen5Machine();
  int shortened = 0;
  int lengthened = 0;
  int split_rows = 0;
  for (KernelConfig config : RunnablePackedConfigs<X>()) {
    for (int threads : {1, 2}) {
      config.threads = threads;
      config.parallel_loop = ParallelLoop::kJc;
      auto packer = GemmPlan<X>::Create(config);
      ASSERT_TRUE(packer.ok());
      for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
        const bool a_side = !GemmTypes<X>::kLowPrecision && layout == Layout::kColMajor;
        const int side = a_side ? config.nr : config.mr;
        std::vector<typename GemmTypes<X>::B> b(64 * 64);
        auto packed = packer->PackB(layout, Trans::kNo, 29, 37, b.data(), 64);
        ASSERT_TRUE(packed.ok());
        const PanelConfigs<X> panel_configs(*packed, machine);
        ASSERT_FALSE(panel_configs.configs().empty());
        EXPECT_EQ(panel_configs.configs().front(), packed->config());
        for (int rows : {1, 2, 3, side - 1, side, side + 1, 2 * side + 1, 4 * side, 9 * side + 1}) {
          if (rows < 1) continue;
          const KernelConfig& chosen = panel_configs.configs().at(panel_configs.For(rows));
          SCOPED_TRACE(config.ToString() + " -> " + chosen.ToString() + " for " +
                       std::to_string(rows) + " rows, " + ToString(layout));
          EXPECT_TRUE(packed->PackedFor(chosen));
          const int chosen_side = a_side ? chosen.nr : chosen.mr;
          if (chosen_side > side) {  // a longer tile serves only calls of the tile's rows or more
            EXPECT_GE(rows, side);
            ++lengthened;
          }
          if (chosen_side < side) ++shortened;
          if (chosen.parallel_loop == ParallelLoop::kIc) ++split_rows;
          auto runner = GemmPlan<X>::Create(chosen);
          ASSERT_TRUE(runner.ok()) << runner.error().message;
          using Scalar = typename GemmTypes<X>::Scalar;
          ExpectPackedRunExact(*packer, *runner,
                               Problem3<X>{layout, Trans::kNo, Trans::kYes, rows, 29, 37,
                                           Scalar(2), Scalar(0)},
                               rng);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
  // Every registry has tiles of one width and several heights; a tall call on two threads
  // splits the rows of 37 columns.
  EXPECT_GT(shortened, 0);
  EXPECT_GT(lengthened, 0);
  EXPECT_GT(split_rows, 0);
}

TEST(PackedBTest, F32PanelConfigsExact) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CheckPanelConfigs<float>();
}
TEST(PackedBTest, F64PanelConfigsExact) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CheckPanelConfigs<double>();
}
TEST(PackedBTest, Bf16PanelConfigsExact) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CheckPanelConfigs<Bf16Gemm>();
}
TEST(PackedBTest, S8PanelConfigsExact) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CheckPanelConfigs<S8Gemm>();
}

// f32 weights, 256 x 768, packed for an AVX-512 `mr` x `nr` tile in row blocks of `mc` on
// `threads`, and the configs PanelConfigs offers for them on the synthetic Zen 5 (two zmm FMA
// pipes); nullopt where this CPU runs no AVX-512 f32 kernels.
struct F32Panels {
  PackedB<float> packed;
  PanelConfigs<float> configs;
};
// The AVX-512 packed config of an `mr` x `nr` tile in row blocks of `mc`, k blocks of 256 and
// column blocks of 768, jc on `threads`.
KernelConfig Avx512PackedConfig(int mr, int nr, int mc, int threads) {
  KernelConfig config;
  config.family = KernelFamily::kPacked;
  config.isa = IsaLevel::kAvx512;
  config.mr = mr;
  config.nr = nr;
  config.kc = 256;
  config.mc = mc;
  config.nc = 768;
  config.threads = threads;
  config.parallel_loop = ParallelLoop::kJc;
  return config;
}

std::optional<F32Panels> PackF32Panels(int mr, int nr, int mc, int threads) {
  auto packer = GemmPlan<float>::Create(Avx512PackedConfig(mr, nr, mc, threads));
  if (!packer.ok()) return std::nullopt;
  const std::int64_t k = 256;
  const std::int64_t n = 768;
  std::vector<float> b(static_cast<std::size_t>(k * n), 1.0f);
  auto packed = packer->PackB(Layout::kRowMajor, Trans::kNo, n, k, b.data(), n);
  EXPECT_TRUE(packed.ok());
  if (!packed.ok()) return std::nullopt;
  PanelConfigs<float> configs(*packed, testing::SyntheticZen5Machine());
  return F32Panels{std::move(*packed), std::move(configs)};
}

// The rows of a call pick the tile by the model on a core with two zmm FMA pipes: f32 6x64
// weights run one row of a decode step, and their own tile on multiples of six and where its
// last rows run in a roomy kernel of their rows (16 and 40 rows: 4x64) or in 1x64, bound by the
// FMA latency alone (7 and 13 rows); four-row tiles where the six-row ones would end in a starved
// 2x64 (8 and 20 rows). Two threads split the rows where M is at least half of N, the columns of
// wide weights.
TEST(PackedBTest, RowsPickTheTileAndTheSplitOnTwoZmmPipes) {
  const std::optional<F32Panels> panels = PackF32Panels(6, 64, 96, 2);
  if (!panels) GTEST_SKIP() << "this CPU runs no AVX-512 f32 kernels";
  auto chosen = [&](std::int64_t rows) {
    return panels->configs.configs()[panels->configs.For(rows)];
  };
  EXPECT_EQ(chosen(1).mr, 1);
  EXPECT_EQ(chosen(4).mr, 4);
  EXPECT_EQ(chosen(5).mr, 6);
  for (std::int64_t rows : {8, 20}) EXPECT_EQ(chosen(rows).mr, 4) << rows << " rows";
  for (std::int64_t rows : {6, 7, 9, 10, 12, 13, 16, 24, 32, 40, 48, 50, 64, 96, 128}) {
    EXPECT_EQ(chosen(rows).mr, 6) << rows << " rows";
    EXPECT_EQ(chosen(rows).parallel_loop, ParallelLoop::kJc) << rows << " rows";
  }
  EXPECT_EQ(chosen(384).parallel_loop, ParallelLoop::kIc);
  EXPECT_EQ(chosen(384).mr, 6);
  EXPECT_EQ(chosen(383).parallel_loop, ParallelLoop::kJc);
  for (std::int64_t rows : {1, 32, 384}) EXPECT_EQ(chosen(rows).nr, 64);
}

// Panels of 32 f32 columns serve every tile of that width: the model's pick for 128 rows, 8x32,
// runs its multiples, and the longer tiles run rows that 8x32 would end in a short kernel of
// (10x32 for 9, 10 and 20 rows, 12x32 for 12, 14x32 for 14; 28 rows are level by the model as
// 14x32 and as 10x32 ending in 8x32, and take the shorter tile), while rows fewer than 8 run the
// shortest tile that covers them.
TEST(PackedBTest, ThirtyTwoColumnPanelsRunLongerTilesWhereTheirTilePads) {
  const std::optional<F32Panels> panels = PackF32Panels(8, 32, 128, 1);
  if (!panels) GTEST_SKIP() << "this CPU runs no AVX-512 f32 kernels";
  auto rows_of_tile = [&](std::int64_t rows) {
    const KernelConfig& chosen = panels->configs.configs()[panels->configs.For(rows)];
    EXPECT_EQ(chosen.nr, 32) << rows << " rows";
    EXPECT_TRUE(panels->packed.PackedFor(chosen)) << chosen.ToString();
    return chosen.mr;
  };
  for (std::int64_t rows : {1, 4}) EXPECT_EQ(rows_of_tile(rows), rows);
  for (std::int64_t rows : {8, 16, 24, 64, 128}) EXPECT_EQ(rows_of_tile(rows), 8) << rows;
  for (std::int64_t rows : {9, 10, 20}) EXPECT_EQ(rows_of_tile(rows), 10) << rows;
  EXPECT_EQ(rows_of_tile(12), 12);
  EXPECT_EQ(rows_of_tile(14), 14);
  EXPECT_EQ(rows_of_tile(28), 10);
}

// bf16 and s8 vector tiles run longer tiles of their panels' width only within the packed
// model's 16 accumulators for dot products on two zmm pipes: 4x64 panels (16) take no 6x64
// (24), while 2x64 panels take 4x64.
TEST(PackedBTest, LowPrecisionPanelsRunNoTileTheModelWouldNotPick) {
  for (int mr : {2, 4}) {
    const KernelConfig config = Avx512PackedConfig(mr, 64, 16 * mr, 1);
    if (!GemmPlan<Bf16Gemm>::Create(config).ok()) GTEST_SKIP() << "no AVX-512 bf16 kernels";
    const PanelConfigs<Bf16Gemm> panel_configs(config, 768, false,
                                               testing::SyntheticZen5Machine());
    int most_rows = 0;
    for (const KernelConfig& c : panel_configs.configs()) most_rows = std::max(most_rows, c.mr);
    EXPECT_EQ(most_rows, 4) << config.ToString();
  }
}

TEST(PackedBTest, F32EveryKernelExact) { CheckEveryKernel<float>(); }
TEST(PackedBTest, F64EveryKernelExact) { CheckEveryKernel<double>(); }
TEST(PackedBTest, Bf16EveryKernelExact) { CheckEveryKernel<Bf16Gemm>(); }
TEST(PackedBTest, S8EveryKernelExact) { CheckEveryKernel<S8Gemm>(); }

KernelConfig AnyPackedF32() {
  const auto configs = RunnablePackedConfigs<float>();
  return configs.front();
}

TEST(PackedBTest, PackedForTheKernelAndKBlockOnly) {
  const KernelConfig config = AnyPackedF32();
  auto plan = GemmPlan<float>::Create(config);
  ASSERT_TRUE(plan.ok());
  std::vector<float> b(40 * 30, 1.0f);
  auto packed = plan->PackB(Layout::kRowMajor, Trans::kNo, 30, 40, b.data(), 30);
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  EXPECT_TRUE(packed->PackedFor(config));
  KernelConfig other = config;
  other.mc *= 2;
  other.nc *= 2;
  other.threads = 2;
  other.parallel_loop = ParallelLoop::kIc;
  other.prefetch_c = !other.prefetch_c;
  EXPECT_TRUE(packed->PackedFor(other));  // blocks, loop, threads, prefetch: same panels
  for (const auto& entry : MicroKernels<float>(config.isa)) {
    KernelConfig tile = config;
    tile.mr = entry.mr;
    tile.nr = entry.nr;
    tile.k_unroll = entry.k_unroll;
    // Row-major B panels are nr wide: any kernel of that width reads them.
    EXPECT_EQ(packed->PackedFor(tile), entry.nr == config.nr) << tile.ToString();
  }
  other = config;
  other.kc += 1;
  EXPECT_FALSE(packed->PackedFor(other));
  other = config;
  other.kc = 4096;  // both cover all of K = 40 in one block
  KernelConfig whole = config;
  whole.kc = 1024;
  auto whole_plan = GemmPlan<float>::Create(whole);
  ASSERT_TRUE(whole_plan.ok());
  auto whole_packed = whole_plan->PackB(Layout::kRowMajor, Trans::kNo, 30, 40, b.data(), 30);
  ASSERT_TRUE(whole_packed.ok());
  EXPECT_TRUE(whole_packed->PackedFor(other));
  other = config;
  other.family = KernelFamily::kDirect;
  EXPECT_FALSE(packed->PackedFor(other));
  EXPECT_EQ(packed->k(), 40);
  EXPECT_EQ(packed->n(), 30);
  EXPECT_GE(packed->size(), 40 * 30);
}

TEST(PackedBTest, MismatchesAreRefusedAndCIsUntouched) {
  const KernelConfig config = AnyPackedF32();
  auto plan = GemmPlan<float>::Create(config);
  ASSERT_TRUE(plan.ok());
  std::vector<float> a(8 * 40, 1.0f), b(40 * 30, 1.0f), c(8 * 30, 5.0f);
  auto packed = plan->PackB(Layout::kRowMajor, Trans::kNo, 30, 40, b.data(), 30);
  ASSERT_TRUE(packed.ok());
  const std::vector<float> before = c;
  auto expect_refused = [&](const GemmArgs<float>& args, const GemmPlan<float>& with,
                            const std::string& words) {
    const Status status = with.Run(args, *packed);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(words), std::string::npos) << status.error().message;
    EXPECT_EQ(c, before);
  };
  GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, 8, 30, 40, 1, a.data(), 40,
                       nullptr, 0, 0, c.data(), 30, {}};
  GemmArgs<float> wrong = args;
  wrong.k = 39;
  wrong.lda = 39;
  expect_refused(wrong, *plan, "40 x 30");
  wrong = args;
  wrong.n = 29;
  expect_refused(wrong, *plan, "40 x 30");
  wrong = args;
  wrong.layout = Layout::kColMajor;
  wrong.lda = 8;
  wrong.ldc = 8;
  expect_refused(wrong, *plan, "row-major");
  KernelConfig other_kc = config;
  other_kc.kc = config.kc * 2;
  auto other_plan = GemmPlan<float>::Create(other_kc);
  ASSERT_TRUE(other_plan.ok());
  expect_refused(args, *other_plan, "panels differ");
  wrong = args;
  wrong.lda = 39;  // below K: the usual argument check still runs
  expect_refused(wrong, *plan, "lda");
  EXPECT_TRUE(plan->Run(args, *packed).ok());
  EXPECT_EQ(c[0], 40.0f);
}

TEST(PackedBTest, GemvPlansAndMovedFromPanelsAreRefused) {
  const KernelConfig config = AnyPackedF32();
  auto plan = GemmPlan<float>::Create(config);
  ASSERT_TRUE(plan.ok());
  std::vector<float> b(40 * 30, 1.0f), a(40, 1.0f), c(30, 7.0f);
  auto packed = plan->PackB(Layout::kRowMajor, Trans::kNo, 30, 40, b.data(), 30);
  ASSERT_TRUE(packed.ok());
  KernelConfig gemv;
  gemv.family = KernelFamily::kGemv;
  gemv.isa = IsaLevel::kGeneric;
  gemv.mr = GemvKernels<float>(IsaLevel::kGeneric).front().mr;
  gemv.nr = GemvKernels<float>(IsaLevel::kGeneric).front().nr;
  auto gemv_plan = GemmPlan<float>::Create(gemv);
  ASSERT_TRUE(gemv_plan.ok()) << gemv_plan.error().message;
  const GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, 1, 30, 40, 1, a.data(),
                             40, nullptr, 0, 0, c.data(), 30, {}};
  const Status on_gemv = gemv_plan->Run(args, *packed);
  ASSERT_FALSE(on_gemv.ok());
  EXPECT_NE(on_gemv.error().message.find("packed-family"), std::string::npos);
  PackedB<float> taken = std::move(*packed);
  const Status moved = plan->Run(args, *packed);  // NOLINT(bugprone-use-after-move): on purpose
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().message.find("moved from"), std::string::npos);
  EXPECT_EQ(c, std::vector<float>(30, 7.0f));
  ASSERT_TRUE(plan->Run(args, taken).ok());
  EXPECT_EQ(c[0], 40.0f);
  auto huge = plan->PackB(Layout::kRowMajor, Trans::kNo, std::int64_t{1} << 41, 2, b.data(),
                          std::int64_t{1} << 41);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("too large"), std::string::npos);
}

TEST(PackedBTest, PackingRefusesBadArgumentsAndOtherFamilies) {
  const KernelConfig config = AnyPackedF32();
  auto plan = GemmPlan<float>::Create(config);
  ASSERT_TRUE(plan.ok());
  std::vector<float> b(64, 1.0f);
  auto low_ldb = plan->PackB(Layout::kRowMajor, Trans::kNo, 8, 8, b.data(), 7);
  ASSERT_FALSE(low_ldb.ok());
  EXPECT_EQ(low_ldb.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(low_ldb.error().message.find("ldb"), std::string::npos) << low_ldb.error().message;
  auto negative = plan->PackB(Layout::kRowMajor, Trans::kNo, 8, -1, b.data(), 8);
  EXPECT_FALSE(negative.ok());
  auto null_b = plan->PackB(Layout::kRowMajor, Trans::kNo, 8, 8, nullptr, 8);
  ASSERT_FALSE(null_b.ok());
  EXPECT_NE(null_b.error().message.find("B is NULL"), std::string::npos);
  KernelConfig direct = config;
  direct.family = KernelFamily::kDirect;
  direct.mc = 0;
  direct.nc = 0;
  direct.kc = 0;
  auto direct_plan = GemmPlan<float>::Create(direct);
  ASSERT_TRUE(direct_plan.ok()) << direct_plan.error().message;
  auto refused = direct_plan->PackB(Layout::kRowMajor, Trans::kNo, 8, 8, b.data(), 8);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("packed-family"), std::string::npos);
}

TEST(PackedBTest, EmptyDimensionsComputeWhatBlasSays) {
  const KernelConfig config = AnyPackedF32();
  auto plan = GemmPlan<float>::Create(config);
  ASSERT_TRUE(plan.ok());
  // K = 0: C = beta * C (beta = 0 writes zeros over NaN).
  auto empty_k = plan->PackB(Layout::kRowMajor, Trans::kNo, 5, 0, nullptr, 5);
  ASSERT_TRUE(empty_k.ok()) << empty_k.error().message;
  EXPECT_EQ(empty_k->size(), 0);
  std::vector<float> c(3 * 5, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> a(3, 1.0f);
  GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, 3, 5, 0, 1, a.data(), 1,
                       nullptr, 0, 0, c.data(), 5, {}};
  ASSERT_TRUE(plan->Run(args, *empty_k).ok());
  for (float v : c) EXPECT_EQ(v, 0.0f);
  // N = 0: nothing to do.
  auto empty_n = plan->PackB(Layout::kRowMajor, Trans::kNo, 0, 4, nullptr, 1);
  ASSERT_TRUE(empty_n.ok()) << empty_n.error().message;
  std::vector<float> a4(3 * 4, 1.0f);
  GemmArgs<float> none{Layout::kRowMajor, Trans::kNo, Trans::kNo, 3, 0, 4, 1, a4.data(), 4,
                       nullptr, 0, 0, c.data(), 1, {}};
  EXPECT_TRUE(plan->Run(none, *empty_n).ok());
}

}  // namespace
}  // namespace mmtune
