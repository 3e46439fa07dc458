// The full GEMM over every family, with many random configurations per shape (the tuner will run
// them all): shapes with 1, primes, values just around tile multiples and larger than the cache
// blocks; both layouts, all transposes, padded leading dimensions, alpha/beta variants, NaN in C
// with beta = 0, canaries around C.
#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_test_util.h"
#include "guarded_buffer.h"
#include "kernels/cache_line.h"
#include "kernels/default_config.h"
#include "kernels/gemm_internal.h"
#include "kernels/microkernel.h"
#include "kernels/model_internal.h"
#include "kernels/packing.h"
#include "synthetic_machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

using testing::CheckResult;
using testing::GemmCase;
using testing::GuardedCopy;
using testing::PackedConfigOf;
using testing::MakeCase;
using testing::RunnableLevels;
using testing::StoredExtent;

template <typename T>
constexpr DType DTypeOf() {
  return sizeof(T) == 4 ? DType::kF32 : DType::kF64;
}


// A random, valid config of `family` for an m x n x k problem at `isa`. Blocks are drawn small
// as well as large, so even small shapes cross several mc/kc/nc block boundaries.
template <typename T>
KernelConfig RandomConfig(KernelFamily family, IsaLevel isa, std::int64_t m, std::int64_t n,
                          std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  KernelConfig c;
  c.family = family;
  c.isa = isa;
  c.threads = pick(1, 2);
  c.prefetch_a = pick(0, 1) * pick(1, 16);
  c.prefetch_b = pick(0, 1) * pick(1, 16);
  c.prefetch_c = pick(0, 1) == 1;
  if (family == KernelFamily::kGemv) {
    const auto kernels = GemvKernels<T>(isa);
    const auto& entry = kernels[static_cast<std::size_t>(pick(0, static_cast<int>(kernels.size()) - 1))];
    c.mr = entry.mr;
    c.nr = entry.nr;
    c.parallel_loop = ParallelLoop::kJc;
    return c;
  }
  const auto kernels = MicroKernels<T>(isa);
  const auto& entry = kernels[static_cast<std::size_t>(pick(0, static_cast<int>(kernels.size()) - 1))];
  c.mr = entry.mr;
  c.nr = entry.nr;
  c.k_unroll = entry.k_unroll;
  if (family == KernelFamily::kDirect) {
    c.parallel_loop = pick(0, 1) == 0 ? ParallelLoop::kJc : ParallelLoop::kIc;
    // Half of the direct configs split K into blocks, short ones too, so that blocks end inside
    // the k loops of most shapes.
    if (pick(0, 1) == 1) c.kc = pick(0, 1) == 0 ? pick(1, 24) : pick(25, 300);
    c.tile_order = pick(0, 1) == 0 ? TileOrder::kColumnPanels : TileOrder::kRowPanels;
    return c;
  }
  c.parallel_loop = static_cast<ParallelLoop>(pick(0, 3));  // jc, ic, jr, icown
  c.a_in_place = c.parallel_loop != ParallelLoop::kJr && pick(0, 1) == 1;
  c.kc = pick(0, 1) == 0 ? pick(1, 24) : pick(64, 512);
  c.mc = c.mr * (pick(0, 1) == 0 ? pick(1, 3) : pick(8, 64));
  c.nc = c.nr * (pick(0, 1) == 0 ? pick(1, 3) : pick(8, 64));
  static_cast<void>(m);
  static_cast<void>(n);
  return c;
}

// The direct config of a registered kernel, split by columns.
template <typename T>
KernelConfig DirectConfigFor(const MicroKernelEntry<T>& kernel, int threads, int kc) {
  KernelConfig config;
  config.family = KernelFamily::kDirect;
  config.isa = kernel.isa;
  config.mr = kernel.mr;
  config.nr = kernel.nr;
  config.k_unroll = kernel.k_unroll;
  config.threads = threads;
  config.kc = kc;
  config.parallel_loop = ParallelLoop::kJc;
  return config;
}

template <typename T>
void RunCases(KernelFamily family, const std::vector<std::array<std::int64_t, 3>>& shapes,
              int configs_per_shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<T> alphas = {T(1), T(-1.5), T(0.3125)};
  const std::vector<T> betas = {T(0), T(1), T(-1.5), T(0.625)};
  int cases = 0;
  for (const auto& [m, n, k] : shapes) {
    for (int round = 0; round < configs_per_shape; ++round) {
      for (IsaLevel isa : RunnableLevels()) {
        const Layout layout = (round + cases) % 2 == 0 ? Layout::kRowMajor : Layout::kColMajor;
        const Trans ta = static_cast<Trans>(rng() % 2);
        const Trans tb = static_cast<Trans>(rng() % 2);
        const T alpha = alphas[rng() % alphas.size()];
        const T beta = betas[rng() % betas.size()];
        const bool nan_c = beta == T(0) && rng() % 2 == 0;
        const std::int64_t extra_ld = static_cast<std::int64_t>(rng() % 3) * 5;
        GemmCase<T> gc = MakeCase<T>(layout, ta, tb, m, n, k, alpha, beta, extra_ld, nan_c, rng);
        const KernelConfig config = RandomConfig<T>(family, isa, m, n, rng);
        GemmArgs<T> args{layout, ta, tb, m, n, k, alpha, gc.a.data(), gc.a.ld,
                         gc.b.data(), gc.b.ld, beta, gc.c.data(), gc.c.ld, {}};
        const Status status = Gemm(config, args);
        ASSERT_TRUE(status.ok()) << config.ToString() << ": " << status.error().message;
        ++cases;
        if (CheckResult(gc, config.ToString()) > 0) return;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// Around tile multiples (8, 16, 24, 32 lanes x small MR), primes, and beyond the test's blocks.
const std::vector<std::array<std::int64_t, 3>> kMatrixShapes = {
    {2, 2, 2},    {3, 5, 7},     {4, 8, 16},   {5, 17, 3},   {6, 16, 1},   {7, 15, 33},
    {8, 24, 9},   {12, 32, 17},  {13, 31, 29}, {16, 48, 64}, {17, 65, 31}, {23, 7, 101},
    {29, 97, 13}, {31, 33, 127}, {48, 49, 50}, {67, 129, 71}, {97, 61, 263}, {130, 257, 40}};

template <typename T>
class GemmTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmTest, ElementTypes);

TYPED_TEST(GemmTest, PackedFamilyMatchesTheReference) {
  RunCases<TypeParam>(KernelFamily::kPacked, kMatrixShapes, 4, 1);
}

TYPED_TEST(GemmTest, DirectFamilyMatchesTheReference) {
  RunCases<TypeParam>(KernelFamily::kDirect, kMatrixShapes, 4, 2);
}

TYPED_TEST(GemmTest, GemvFamilyMatchesTheReference) {
  RunCases<TypeParam>(KernelFamily::kGemv,
                      {{1, 1, 1},
                       {1, 7, 3},
                       {1, 64, 64},
                       {1, 257, 129},
                       {1, 1000, 17},
                       {5, 1, 9},
                       {64, 1, 64},
                       {257, 1, 300},
                       {1, 3, 0}},
                      6, 3);
}

// Partial direct tiles run the snug kernel (SnugTiles): the registered kernel of the same ISA
// and k unroll, no larger than the config's, with the fewest accumulators that covers them.
TYPED_TEST(GemmTest, SnugTilesCoverPartialTilesWithTheFewestAccumulators) {
  using T = TypeParam;
  for (IsaLevel isa : kIsaLevels) {
    const auto kernels = MicroKernels<T>(isa);
    const int lanes = VectorLanes(isa, sizeof(T));
    for (const auto& kernel : kernels) {
      const SnugTiles<T>& snug = SnugTiles<T>::Of(kernel);
      EXPECT_EQ(&snug.For(kernel.mr, kernel.nr), &kernel);
      for (int m = 1; m <= kernel.mr; ++m) {
        for (int n = 1; n <= kernel.nr; ++n) {
          const MicroKernelEntry<T>& tile = snug.For(m, n);
          const std::string where = std::string(ToString(isa)) + " " +
                                    std::to_string(kernel.mr) + "x" + std::to_string(kernel.nr) +
                                    " at " + std::to_string(m) + "x" + std::to_string(n);
          ASSERT_EQ(tile.isa, isa) << where;
          ASSERT_EQ(tile.k_unroll, kernel.k_unroll) << where;
          ASSERT_TRUE(tile.mr >= m && tile.mr <= kernel.mr) << where;
          ASSERT_TRUE(tile.nr >= n && tile.nr <= kernel.nr) << where;
          for (const auto& other : kernels) {
            const bool fits = other.k_unroll == kernel.k_unroll && other.mr >= m &&
                              other.nr >= n && other.mr <= kernel.mr && other.nr <= kernel.nr;
            EXPECT_FALSE(fits && other.mr * other.nr < tile.mr * tile.nr)
                << where << ": " << other.mr << "x" << other.nr << " is smaller than "
                << tile.mr << "x" << tile.nr;
          }
          // Vectors of columns, not columns, pick the tile.
          EXPECT_EQ(&tile, &snug.For(m, (n + lanes - 1) / lanes * lanes)) << where;
        }
      }
    }
  }
}

// Every remainder of rows and of vector columns, with every kernel as the config's, so each
// snug kernel runs as a bottom, right and corner tile: in place (A by rows and transposed), B in
// place or transposed (copied), one k block and several, against the reference with canaries
// around C. A and B are copies of exactly their extent followed by an inaccessible page, so a
// kernel reading past the last row's columns faults.
TYPED_TEST(GemmTest, DirectPartialTilesMatchTheReferenceWithEveryKernel) {
  using T = TypeParam;
  std::mt19937_64 rng(21);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    const int lanes = VectorLanes(isa, sizeof(T));
    for (const auto& kernel : MicroKernels<T>(isa)) {
      if (kernel.k_unroll != 1) continue;
      const int vectors = kernel.nr / lanes;
      for (int rows_left : {kernel.mr - 1, (kernel.mr + 1) / 2, 1}) {
        for (int vectors_left = 0; vectors_left < vectors; ++vectors_left) {
          if (rows_left < 1) continue;
          const std::int64_t m = 2 * kernel.mr + rows_left;
          // A partial last vector too, where the ISA has more than one lane.
          const std::int64_t n = kernel.nr + vectors_left * lanes + (lanes > 1 ? lanes / 2 : 1);
          const std::int64_t k = 3 + cases % 11;
          const Trans ta = cases % 2 == 0 ? Trans::kNo : Trans::kYes;
          const Trans tb = cases % 3 == 0 ? Trans::kYes : Trans::kNo;
          const T beta = cases % 2 == 0 ? T(0) : T(0.5);
          GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, ta, tb, m, n, k, T(1), beta,
                                       cases % 5 == 0 ? 3 : 0, beta == T(0), rng);
          KernelConfig config = DirectConfigFor(kernel, 1, cases % 4 == 0 ? 2 : 0);
          // Both tile orders, each with and without k blocks.
          if (cases % 8 >= 4) config.tile_order = TileOrder::kRowPanels;
          const GuardedCopy<T> a(gc.a.data(),
                                 StoredExtent(Layout::kRowMajor, ta, m, k, gc.a.ld));
          const GuardedCopy<T> b(gc.b.data(),
                                 StoredExtent(Layout::kRowMajor, tb, k, n, gc.b.ld));
          GemmArgs<T> args{Layout::kRowMajor, ta, tb, m, n, k, T(1), a.data(), gc.a.ld,
                           b.data(), gc.b.ld, beta, gc.c.data(), gc.c.ld, {}};
          const Status status = Gemm(config, args);
          ASSERT_TRUE(status.ok()) << config.ToString() << ": " << status.error().message;
          ++cases;
          if (CheckResult(gc, config.ToString()) > 0) return;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// A packed config's partial row panel runs in the snug kernel of its rows, its A packed that
// tall: with every kernel as the config's and each remainder of rows, for every parallel loop
// on two threads, each with A packed or read in place (by rows or transposed), one k block or
// several, the partial panel alone in its row block or after whole ones, and B packed in the
// call or beforehand, drawn independently, against the reference with canaries around C and A
// ending before an inaccessible page. (Epilogues on partial panels: epilogue_test.cc.)
TYPED_TEST(GemmTest, PackedPartialRowsMatchTheReferenceWithEveryKernel) {
  using T = TypeParam;
  std::mt19937_64 rng(22);
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    const int lanes = VectorLanes(isa, sizeof(T));
    for (const auto& kernel : MicroKernels<T>(isa)) {
      if (kernel.k_unroll != 1) continue;
      for (int rows_left : {kernel.mr - 1, (kernel.mr + 1) / 2, 1}) {
        if (rows_left < 1 || (rows_left == 1 && kernel.mr == 1)) continue;
        for (ParallelLoop loop :
             {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr, ParallelLoop::kIcOwnB}) {
          auto coin = [&] { return rng() % 2 == 0; };
          const std::int64_t m = 2 * kernel.mr + rows_left;
          const std::int64_t n = kernel.nr + (lanes > 1 ? lanes / 2 : 1);
          const std::int64_t k = 5 + static_cast<std::int64_t>(rng() % 13);
          const Trans ta = coin() ? Trans::kNo : Trans::kYes;
          const T beta = coin() ? T(0) : T(0.5);
          GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, ta, Trans::kNo, m, n, k, T(1.5), beta,
                                       coin() ? 3 : 0, beta == T(0), rng);
          KernelConfig config = PackedConfigOf(isa, kernel);
          config.threads = 2;
          config.parallel_loop = loop;
          config.a_in_place = loop != ParallelLoop::kJr && coin();
          config.kc = coin() ? 4 : 256;
          config.mc = kernel.mr * (coin() ? 2 : 3);
          config.nc = kernel.nr;
          const GuardedCopy<T> a(gc.a.data(), StoredExtent(Layout::kRowMajor, ta, m, k, gc.a.ld));
          GemmArgs<T> args{Layout::kRowMajor, ta, Trans::kNo, m, n, k, T(1.5), a.data(), gc.a.ld,
                           gc.b.data(), gc.b.ld, beta, gc.c.data(), gc.c.ld, {}};
          auto plan = GemmPlan<T>::Create(config);
          ASSERT_TRUE(plan.ok()) << config.ToString();
          const bool packed_b = coin();
          Status status = OkStatus();
          if (packed_b) {
            auto weights = plan->PackB(Layout::kRowMajor, Trans::kNo, n, k, gc.b.data(), gc.b.ld);
            ASSERT_TRUE(weights.ok()) << config.ToString();
            args.b = nullptr;
            status = plan->Run(args, *weights);
          } else {
            status = plan->Run(args);
          }
          ASSERT_TRUE(status.ok()) << config.ToString() << ": " << status.error().message;
          ++cases;
          if (CheckResult(gc, config.ToString() + (packed_b ? " on packed B" : "")) > 0) return;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

TYPED_TEST(GemmTest, BlocksLargerThanTheCaches) {
  // One shape that needs several default-sized kc/mc/nc blocks in every dimension.
  using T = TypeParam;
  std::mt19937_64 rng(9);
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  for (int threads : {1, 2}) {
    Problem problem{DTypeOf<T>(), Layout::kRowMajor, Trans::kNo, Trans::kYes, 301, 1031, 523,
                    threads};
    // The packed loops are under test, with the model's tile whichever family it picks here.
    KernelConfig config = ModelConfig(problem, *machine);
    config.family = KernelFamily::kPacked;
    config.kc = 200;
    config.mc = config.mr * 10;
    config.nc = config.nr * 12;
    config.parallel_loop = threads == 1 ? ParallelLoop::kJc : ParallelLoop::kIc;
    ASSERT_TRUE(config.Validate(problem, *machine).ok());
    GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kYes, 301, 1031, 523,
                                 T(1), T(0), 1, true, rng);
    GemmArgs<T> args{Layout::kRowMajor, Trans::kNo, Trans::kYes, 301, 1031, 523, T(1),
                     gc.a.data(), gc.a.ld, gc.b.data(), gc.b.ld, T(0), gc.c.data(), gc.c.ld, {}};
    ASSERT_TRUE(Gemm(config, args).ok());
    EXPECT_EQ(CheckResult(gc, config.ToString()), 0);
  }
}

TYPED_TEST(GemmTest, DirectPanelsAlignedToAMisalignedB) {
  // The direct driver starts with a narrow column panel where B (large, many panels) has rows
  // that all start the same distance past a cache line, so later panels start on a line; the
  // edge kernels that mask B read that panel in place. B is read from a copy of exactly its
  // extent that ends where an inaccessible page begins (a read past its last element faults),
  // so its offset from a line follows from its extent: N = 132 lines' worth minus the offset.
  using T = TypeParam;
  std::mt19937_64 rng(11);
  constexpr std::int64_t m = 5;
  constexpr std::int64_t line_elements = kCacheLineBytes / static_cast<std::int64_t>(sizeof(T));
  int cases = 0;
  for (IsaLevel isa : RunnableLevels()) {
    for (const MicroKernelEntry<T>& kernel : MicroKernels<T>(isa)) {
      if (!kernel.edge_reads_n_columns_of_b || kernel.k_unroll != 1 || kernel.mr != 4) continue;
      for (std::int64_t offset : {std::int64_t{0}, std::int64_t{1}, line_elements / 4 + 1}) {
        const std::int64_t n = 132 * line_elements - offset;
        const std::int64_t k =
            (std::int64_t{8} << 20) / (n * static_cast<std::int64_t>(sizeof(T))) + 3;
        // ldb a whole number of lines, so every row of B has the same offset from a line.
        const std::int64_t extra_ld = offset;
        const bool beta_zero = offset % 2 == 0;
        GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, T(1),
                                     beta_zero ? T(0) : T(0.5), extra_ld, beta_zero, rng);
        ASSERT_EQ(gc.b.ld % line_elements, 0);
        const GuardedCopy<T> b(gc.b.data(),
                               StoredExtent(Layout::kRowMajor, Trans::kNo, k, n, gc.b.ld));
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % kCacheLineBytes,
                  static_cast<std::uintptr_t>(offset) * sizeof(T));
        KernelConfig config =
            DirectConfigFor(kernel, 1 + static_cast<int>(offset % 2), offset == 0 ? 0 : 300);
        // The narrow first panel (offsets 1 and up) in both tile orders.
        if (offset != 1) config.tile_order = TileOrder::kRowPanels;
        GemmArgs<T> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, gc.alpha,
                         gc.a.data(), gc.a.ld, b.data(), gc.b.ld, gc.beta, gc.c.data(), gc.c.ld,
                         {}};
        ASSERT_TRUE(Gemm(config, args).ok()) << config.ToString();
        ++cases;
        if (CheckResult(gc, config.ToString() + " B offset " + std::to_string(offset)) > 0) {
          return;
        }
      }
    }
  }
  if (cases == 0) GTEST_SKIP() << "no micro-kernel here reads B masked (needs AVX-512)";
}

TYPED_TEST(GemmTest, DefaultConfigIsValidAndCorrectForEveryIsaCap) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  for (IsaLevel isa : RunnableLevels()) {
    const Machine machine = DescribeMachine(host->cpu, host->topology, isa);
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {1, 1, 1}, {1, 300, 200}, {200, 1, 300}, {8, 8, 8}, {33, 400, 17},
             {100, 100, 100}, {150, 260, 700}}) {
      for (int threads : {1, 2}) {
        Problem problem{DTypeOf<T>(), Layout::kColMajor, Trans::kYes, Trans::kNo, m, n, k,
                        threads};
        const KernelConfig config = ModelConfig(problem, machine);
        const Status valid = config.Validate(problem, machine);
        ASSERT_TRUE(valid.ok()) << problem.ToString() << " " << config.ToString() << ": "
                                << valid.error().message;
        // The cap's level, or AVX2 for a small problem whose N an AVX2 tile covers exactly.
        EXPECT_LE(config.isa, isa);
        GemmCase<T> gc = MakeCase<T>(Layout::kColMajor, Trans::kYes, Trans::kNo, m, n, k,
                                     T(-1), T(0.5), 2, false, rng);
        GemmArgs<T> args{Layout::kColMajor, Trans::kYes, Trans::kNo, m, n, k, T(-1),
                         gc.a.data(), gc.a.ld, gc.b.data(), gc.b.ld, T(0.5), gc.c.data(),
                         gc.c.ld, {}};
        ASSERT_TRUE(Gemm(config, args).ok());
        if (CheckResult(gc, config.ToString()) > 0) return;
      }
    }
  }
}

// The direct family's tile model on the Zen 3-like AVX2 machine: where a tile with at least 8
// accumulators (enough to cover the FMA latency) fits the shape exactly, the default takes one
// with no partial tiles; a height-only rule would take 6x16 for 24^3, whose 8-column edge tiles
// compute 16 columns and run far slower than 4x24. Where nothing fits, no tile is taller or
// wider than the problem needs.
TEST(DefaultConfigTest, DirectTilesFitSmallShapes) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  for (std::int64_t size : {8, 24, 48}) {
    const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size,
                          size, 1};
    const KernelConfig config = ModelConfig(problem, machine);
    ASSERT_EQ(config.family, KernelFamily::kDirect) << problem.ToString();
    EXPECT_EQ(size % config.mr, 0) << problem.ToString() << ": " << config.ToString();
    EXPECT_EQ(size % config.nr, 0) << problem.ToString() << ": " << config.ToString();
    EXPECT_GE(config.mr * (config.nr / 8), 8) << problem.ToString() << ": " << config.ToString();
  }
  const Problem thin{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 3, 40, 40, 1};
  const KernelConfig thin_config = ModelConfig(thin, machine);
  EXPECT_LE(thin_config.mr, 3) << thin_config.ToString();
}

// A batch's items whose operands together spill L2 arrive from beyond it: the packed family
// runs what the direct family would read in place (docs/analytical-model.md, Batches); gemv and
// packed defaults stay, and so does everything of a batch that fits L2.
TEST(DefaultConfigTest, ColdOperandsTakeThePackedFamilyWhereTheDirectOneWouldRun) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const CacheBudget cache = CacheBudgetOf(machine.topology);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    const Problem item{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128, 64, 128, 1};
    ASSERT_EQ(ModelConfig(item, machine).family, KernelFamily::kDirect) << item.ToString();
    const KernelConfig cold = ColdOperandsConfig(item, machine);
    EXPECT_EQ(cold.family, KernelFamily::kPacked) << cold.ToString();
    EXPECT_TRUE(cold.Validate(item, machine)) << cold.ToString();
    // 128x64x128 f32 holds 96 KiB of operands, f64 192 KiB: a few items fit Zen 3's 512 KiB L2.
    EXPECT_FALSE(BatchSpillsL2(item, 2, cache)) << item.ToString();
    EXPECT_TRUE(BatchSpillsL2(item, 64, cache)) << item.ToString();
  }
  const Problem decode{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 1, 512, 512, 1};
  EXPECT_EQ(ColdOperandsConfig(decode, machine), ModelConfig(decode, machine));
  const Problem large{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 512, 512, 512, 1};
  EXPECT_EQ(ColdOperandsConfig(large, machine), ModelConfig(large, machine));
  const Problem bf16{DType::kBF16, Layout::kColMajor, Trans::kYes, Trans::kNo, 64, 64, 64, 1};
  EXPECT_EQ(ColdOperandsConfig(bf16, machine), ModelConfig(bf16, machine));
}

// A batch that spills L2 runs its items with ColdOperandsConfig only on a core whose direct
// family reads such cold items slower than packing them (Zen 3's row); elsewhere (the Xeon's
// and Zen 5's rows) with ColdItemsDirectConfig, and in a batch that fits L2 each item keeps its
// own default. A measured fact overrides the row both ways (docs/analytical-model.md, Batches).
TEST(DefaultConfigTest, SpilledBatchesRunColdItemsPackedWhereTheCoreSaysSo) {
  for (const Machine& machine : {testing::SyntheticZen3Machine(), testing::SyntheticXeonMachine(),
                                 testing::SyntheticZen5Machine()}) {
    SCOPED_TRACE(machine.cpu.brand);
    const CacheBudget cache = CacheBudgetOf(machine);
    const Problem item{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128, 64, 128, 1};
    const KernelConfig own = ModelConfig(item, machine);
    const KernelConfig cold = ColdOperandsConfig(item, machine);
    ASSERT_EQ(own.family, KernelFamily::kDirect) << own.ToString();
    ASSERT_EQ(cold.family, KernelFamily::kPacked) << cold.ToString();
    const bool row_packs = machine.cpu.vendor == "AuthenticAMD" && machine.cpu.family == 0x19;
    for (std::optional<bool> measured :
         {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
      Machine calibrated = machine;
      calibrated.measured_facts.direct_reads_cold_items = measured;
      const bool packs = measured ? !*measured : row_packs;
      const KernelConfig cold_direct = ColdItemsDirectConfig(item, calibrated);
      EXPECT_EQ(SpilledItemsConfig(item, calibrated), packs ? cold : cold_direct);
      for (std::int64_t count : {2, 64}) {
        Problem batch = item;
        batch.batch = count;
        const bool spills = BatchSpillsL2(item, count, cache);
        EXPECT_EQ(spills, count == 64);
        const KernelConfig expected = !spills ? own : packs ? cold : cold_direct;
        EXPECT_EQ(BatchDefault(batch, calibrated), expected) << count << " items";
        // The search starts from the default and also measures the other two.
        const std::vector<KernelConfig> others = AnalyticalAlternatives(batch, calibrated);
        for (const KernelConfig& config : {own, cold}) {
          EXPECT_EQ(std::count(others.begin(), others.end(), config), config == expected ? 0 : 1)
              << config.ToString() << ", " << count << " items";
        }
      }
    }
  }
}

// Cold items read in place take a tile as wide as N where the model ranks one level with its
// own: on Zen 4's one zmm FMA pipe 4x64 where a warm call takes 16x16 for N = 64; otherwise,
// and where their own tile spans N, their own (docs/analytical-model.md, Batches).
TEST(DefaultConfigTest, ColdItemsReadInPlaceTakeATileAsWideAsN) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen4 = testing::SyntheticZen4Machine();
  const Problem narrow{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128, 64, 128, 1};
  const KernelConfig own = ModelConfig(narrow, zen4);
  const KernelConfig cold = ColdItemsDirectConfig(narrow, zen4);
  ASSERT_EQ(own.family, KernelFamily::kDirect) << own.ToString();
  ASSERT_LT(own.nr, 64) << own.ToString();
  EXPECT_EQ(cold.family, KernelFamily::kDirect) << cold.ToString();
  EXPECT_EQ(cold.nr, 64) << cold.ToString();
  EXPECT_TRUE(cold.Validate(narrow, zen4)) << cold.ToString();
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen4Machine(),
        testing::SyntheticXeonMachine(), testing::SyntheticZen5Machine()}) {
    SCOPED_TRACE(machine.cpu.brand);
    for (DType dtype : {DType::kF32, DType::kF64}) {
      for (auto [m, n, k] : {std::tuple{128, 64, 128},
                             {128, 128, 64},
                             {64, 64, 64},
                             {256, 64, 256},
                             {100, 24, 100},
                             {128, 128, 128}}) {
        const Problem item{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1};
        const KernelConfig item_own = ModelConfig(item, machine);
        const KernelConfig item_cold = ColdItemsDirectConfig(item, machine);
        EXPECT_TRUE(item_cold.Validate(item, machine)) << item_cold.ToString();
        if (item_own.family != KernelFamily::kDirect) {
          EXPECT_EQ(item_cold, item_own);
          continue;
        }
        EXPECT_EQ(item_cold.family, KernelFamily::kDirect) << item_cold.ToString();
        if (item_cold != item_own) {  // spans N, less than a vector past it
          const int lanes = VectorLanes(item_cold.isa, dtype == DType::kF64 ? 8 : 4);
          EXPECT_LT(item_own.nr, n) << item.ToString() << ": " << item_own.ToString();
          EXPECT_GE(item_cold.nr, n) << item.ToString() << ": " << item_cold.ToString();
          EXPECT_LT(item_cold.nr - lanes, n) << item.ToString() << ": " << item_cold.ToString();
        }
      }
    }
  }
}

// Packed weights of a one-row GEMM take the packed family where the default would read a
// row-major B as stored with the gemv family, with a tall problem's row blocks (larger calls
// reuse the weights); column-major weights (A panels of a one-column product) and a one-column B
// keep ModelConfig, and larger M ModelConfig's config with weights' blocks. On every synthetic
// CPU and dtype, each config valid.
TEST(DefaultConfigTest, PackedWeightsOfOneRowGemmsTakeThePackedFamily) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen4Machine(),
        testing::SyntheticZen5Machine(), testing::SyntheticXeonMachine()}) {
    for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
      const Problem decode{dtype, Layout::kRowMajor, Trans::kNo, Trans::kYes, 1, 4096, 4096, 2};
      ASSERT_EQ(ModelConfig(decode, machine).family, KernelFamily::kGemv) << decode.ToString();
      const KernelConfig weights = PackedWeightsConfig(decode, machine);
      EXPECT_EQ(weights.family, KernelFamily::kPacked) << decode.ToString();
      EXPECT_TRUE(weights.Validate(decode, machine)) << weights.ToString();
      // One row alone would get a block of one tile (mc = mr).
      EXPECT_GT(weights.mc, weights.mr) << weights.ToString();
      EXPECT_EQ(weights.parallel_loop, ParallelLoop::kJc) << weights.ToString();
      Problem prefill = decode;
      prefill.m = 512;
      EXPECT_TRUE(weights.Validate(prefill, machine)) << weights.ToString();
      Problem column_major = decode;
      column_major.layout = Layout::kColMajor;
      Problem vector_b = decode;
      vector_b.n = 1;
      for (const Problem& kept : {column_major, vector_b}) {
        EXPECT_EQ(PackedWeightsConfig(kept, machine), ModelConfig(kept, machine))
            << kept.ToString();
      }
      const KernelConfig prefill_config = PackedWeightsConfig(prefill, machine);
      KernelConfig prefill_blocks = ModelConfig(prefill, machine);
      Problem prefill_weights = RowMajorView(prefill);
      prefill_weights.form = CallForm::kPackedB;
      model::SetPackedBlocks(machine, prefill_weights, prefill_blocks);
      prefill_blocks.a_in_place = prefill_config.a_in_place;  // PackedWeightsReadAInPlace...
      EXPECT_EQ(prefill_config, prefill_blocks) << prefill.ToString();
    }
  }
}

// Weights packed once run, of the tiles as fast per element as the packed model's and no
// heavier on L2, the one that computes the fewest padded rows and columns, the last partial row
// panel counted as the cycles of the kernel of its rows (ComputedRows), others charged 2% (f32)
// or 5% (f64) per element: on the synthetic Xeon (two zmm pipes, 6x64 f32 and 6x32 f64) 8 f32
// rows take 8x32 (6x64 would end in a starved 2x64, counted as 3 rows) and 20 rows 10x32; 64 and
// 128 rows keep 6x64 (their last 4 and 2 rows cost less than 8x32's charge), as do 96, a multiple
// of every candidate, and 200; f64 8 rows take 8x16, 20 rows keep 6x32 (level with 10x16) and 128
// rows too. Zen 3 and Zen 4 keep the model's tile at every M: their other tiles of the same speed
// read more bytes per cycle or are one vector wide (Zen 4's 16x16, which would pad no column of
// N = 336).
TEST(DefaultConfigTest, PackedWeightsRunTheTileThatPadsTheLeast) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine xeon = testing::SyntheticXeonMachine();
  auto weights_tile = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                         int threads) {
    Problem weights{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, 768, threads};
    weights.form = CallForm::kPackedB;
    const KernelConfig config = PackedWeightsConfig(weights, machine);
    EXPECT_EQ(config.family, KernelFamily::kPacked) << weights.ToString();
    EXPECT_TRUE(config.Validate(weights, machine)) << config.ToString();
    return std::to_string(config.mr) + "x" + std::to_string(config.nr);
  };
  for (int threads : {1, 2}) {
    EXPECT_EQ(weights_tile(xeon, DType::kF32, 8, 768, threads), "8x32");
    EXPECT_EQ(weights_tile(xeon, DType::kF32, 20, 768, threads), "10x32");
    EXPECT_EQ(weights_tile(xeon, DType::kF32, 64, 768, threads), "6x64");
    EXPECT_EQ(weights_tile(xeon, DType::kF32, 128, 768, threads), "6x64");
    EXPECT_EQ(weights_tile(xeon, DType::kF32, 96, 768, threads), "6x64");
    EXPECT_EQ(weights_tile(xeon, DType::kF32, 200, 768, threads), "6x64");
    EXPECT_EQ(weights_tile(xeon, DType::kF64, 8, 768, threads), "8x16");
    EXPECT_EQ(weights_tile(xeon, DType::kF64, 20, 768, threads), "6x32");
    EXPECT_EQ(weights_tile(xeon, DType::kF64, 128, 768, threads), "6x32");
  }
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen4Machine()}) {
    for (DType dtype : {DType::kF32, DType::kF64}) {
      for (std::int64_t m = 2; m <= 260; ++m) {
        for (std::int64_t n : {768, 336}) {
          const Problem plain{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, 768, 1};
          const KernelConfig cold = ColdOperandsConfig(plain, machine);
          EXPECT_EQ(weights_tile(machine, dtype, m, n, 1),
                    std::to_string(cold.mr) + "x" + std::to_string(cold.nr))
              << machine.fingerprint_basis << " " << plain.ToString();
        }
      }
    }
  }
}

// Weights of more than half of L2 that the plain call's default would read in place with the
// direct family run the packed family instead (its B packing paid once): the config
// ColdOperandsConfig gives, with weights' blocks, where its tile pads neither M nor N, else one
// that computes no more elements; smaller weights keep the direct default. Both cases occur on
// every synthetic CPU, f32 and f64, 1 and 2 threads.
TEST(DefaultConfigTest, PackedWeightsBeyondHalfOfL2TakeThePackedFamilyOverDirect) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen4Machine(),
        testing::SyntheticZen5Machine(), testing::SyntheticXeonMachine()}) {
    const double half_l2 = static_cast<double>(CacheBudgetOf(machine.topology).l2) / 2;
    for (DType dtype : {DType::kF32, DType::kF64}) {
      for (int threads : {1, 2}) {
        int replaced = 0;
        int kept = 0;
        for (std::int64_t m : {16, 32, 64, 128}) {
          for (std::int64_t n : {64, 256, 512, 768, 1024}) {
            for (std::int64_t k : {64, 256, 512, 768, 1024}) {
              const Problem plain{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                  threads};
              if (ModelConfig(plain, machine).family != KernelFamily::kDirect) continue;
              Problem weights = plain;
              weights.form = CallForm::kPackedB;
              const KernelConfig config = PackedWeightsConfig(weights, machine);
              const double bytes = static_cast<double>(DTypeSize(dtype) * n * k);
              if (bytes > half_l2) {
                ++replaced;
                EXPECT_EQ(config.family, KernelFamily::kPacked) << plain.ToString();
                KernelConfig cold = ColdOperandsConfig(plain, machine);
                cold.a_in_place = config.a_in_place;  // PackedWeightsReadAInPlace... tests it
                model::SetPackedBlocks(machine, weights, cold);
                auto computed = [&](const KernelConfig& c) {
                  return detail::RoundUp(m, c.mr) * detail::RoundUp(n, c.nr);
                };
                if (m % cold.mr == 0 && n % cold.nr == 0) {
                  EXPECT_EQ(config, cold) << plain.ToString();
                } else {
                  EXPECT_LE(computed(config), computed(cold)) << plain.ToString();
                }
                EXPECT_TRUE(config.Validate(plain, machine)) << config.ToString();
              } else {
                ++kept;
                EXPECT_EQ(config, ModelConfig(plain, machine)) << plain.ToString();
              }
            }
          }
        }
        EXPECT_GT(replaced, 0) << machine.fingerprint_basis << " " << ToString(dtype);
        EXPECT_GT(kept, 0) << machine.fingerprint_basis << " " << ToString(dtype);
      }
    }
  }
}

// Packed weights: f32 and f64 read a k-contiguous A in place where each thread's A block passes
// at most 24 B panels (its packing then costs more than reading it in place), else pack it; a
// transposed A, and jr, always packed.
TEST(DefaultConfigTest, PackedWeightsReadAInPlaceWhereFewPanelsPassIt) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  int in_place = 0;
  int packed = 0;
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen5Machine(),
        testing::SyntheticXeonMachine()}) {
    for (DType dtype : {DType::kF32, DType::kF64}) {
      for (int threads : {1, 2}) {
        for (std::int64_t n : {256, 768, 1024, 3072}) {
          for (Trans trans_a : {Trans::kNo, Trans::kYes}) {
            Problem weights{dtype, Layout::kRowMajor, trans_a, Trans::kNo, 128, n, 768, threads};
            weights.form = CallForm::kPackedB;
            const KernelConfig c = PackedWeightsConfig(weights, machine);
            if (c.family != KernelFamily::kPacked) continue;
            const std::int64_t columns =
                c.parallel_loop == ParallelLoop::kJc ? detail::CeilDiv(n, threads) : n;
            const std::int64_t panels =
                detail::CeilDiv(std::min<std::int64_t>(c.nc, columns), c.nr);
            const bool expected = trans_a == Trans::kNo && c.parallel_loop != ParallelLoop::kJr &&
                                  panels <= 24;
            EXPECT_EQ(c.a_in_place, expected) << weights.ToString() << ": " << c.ToString();
            ++(c.a_in_place ? in_place : packed);
            // Column-major weights: the row-major view's A is op(B)^T, the in-place operand.
            Problem column_major = weights;
            column_major.layout = Layout::kColMajor;
            EXPECT_TRUE(PackedWeightsConfig(column_major, machine)
                            .Validate(column_major, machine))
                << column_major.ToString();
          }
        }
      }
    }
  }
  EXPECT_GT(in_place, 0);
  EXPECT_GT(packed, 0);
  // The shapes measured (docs/analytical-model.md, step 2), 1 thread on Zen 5.
  const Machine zen5 = testing::SyntheticZen5Machine();
  auto reads_in_place = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    Problem weights{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1};
    weights.form = CallForm::kPackedB;
    return PackedWeightsConfig(weights, zen5).a_in_place;
  };
  EXPECT_TRUE(reads_in_place(196, 256, 2304));
  EXPECT_TRUE(reads_in_place(512, 512, 512));
  EXPECT_TRUE(reads_in_place(128, 768, 768));
  // 6x64 in blocks of 16 panels (it ends in a 2x64 kernel; 8x32's blocks of 48 panels, packed,
  // ran 0.98x in place).
  EXPECT_TRUE(reads_in_place(128, 3072, 768));
}

// The direct tile on Zen 4 (docs/analytical-model.md, step 2). One zmm FMA per cycle needs only
// four accumulators to cover the FMA latency, so the model takes the tile that wastes least at
// the edges (at 100^3 no more columns than 8x16 computes); a core with two 512-bit FMA pipes
// needs eight or more, and more than sixteen on Zen 4 cost (48^3: 16x16, not 8x48). A read in
// place by rows gives each row its own address, from two pointers of eight rows: no tile taller
// than 16 there, none taller than 8 where M has only one such panel (16^3) or where the rows
// share an L1 set (K = 1024 f32: 4 KiB apart), while a transposed A (one address per k step)
// may take one. AVX-512 and AVX2 direct kernels are not unrolled.
TEST(DefaultConfigTest, DirectTileFollowsTheFmaRateAndTheRowsOfA) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  auto config = [](const Machine& machine, Trans trans_a, std::int64_t size) {
    return ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, trans_a, Trans::kNo, size, size, size, 1},
        machine);
  };
  const Machine zen4 = testing::SyntheticZen4Machine();
  // One zmm FMA a cycle (Zen 4): no more accumulators than 16, and no more columns computed for
  // N = 100 than 8x16 computes (112). A 4x64 tile computes 112 too through its snug edge (4x48
  // for the last 36), with fewer tile calls; a whole-tile edge (128 columns) runs slower.
  const KernelConfig zen4_100 = config(zen4, Trans::kNo, 100);
  ASSERT_EQ(zen4_100.family, KernelFamily::kDirect);
  EXPECT_LE(zen4_100.mr * (zen4_100.nr / 16), 16) << zen4_100.ToString();
  const int snug_last_panel = static_cast<int>(100 % zen4_100.nr + 15) / 16 * 16;
  EXPECT_LE(100 / zen4_100.nr * zen4_100.nr + (100 % zen4_100.nr > 0 ? snug_last_panel : 0), 112)
      << zen4_100.ToString();
  EXPECT_EQ(zen4_100.k_unroll, 1);

  CpuFeatures intel_cpu = zen4.cpu;
  intel_cpu.vendor = "GenuineIntel";
  intel_cpu.family = 6;
  intel_cpu.model = 85;
  const Machine two_pipes = DescribeMachine(intel_cpu, zen4.topology, std::nullopt);
  const KernelConfig two_pipes_100 = config(two_pipes, Trans::kNo, 100);
  EXPECT_GE(two_pipes_100.mr * (two_pipes_100.nr / 16), 8) << two_pipes_100.ToString();

  for (std::int64_t size : {16, 24, 48, 100, 128, 200, 256}) {
    EXPECT_LE(config(zen4, Trans::kNo, size).mr, 16) << size;
    EXPECT_LE(config(two_pipes, Trans::kNo, size).mr, 16) << size;
  }
  const KernelConfig zen4_48 = config(zen4, Trans::kNo, 48);
  EXPECT_EQ(zen4_48.mr, 16) << zen4_48.ToString();
  EXPECT_EQ(zen4_48.nr, 16) << zen4_48.ToString();
  EXPECT_LE(config(zen4, Trans::kNo, 16).mr, 8);
  // With two pipes 8x16's 8 accumulators only just cover the FMA latency: one 16x16 tile (M =
  // 16, a single row panel) runs 16^3 faster than two 8x16 on Zen 5.
  const KernelConfig zen5_16 = config(testing::SyntheticZen5Machine(), Trans::kNo, 16);
  EXPECT_EQ(zen5_16.mr, 16) << zen5_16.ToString();
  EXPECT_EQ(zen5_16.nr, 16) << zen5_16.ToString();
  // Any tall tile over a single row panel there: one 10x32 (20 accumulators) runs 10x20x20
  // faster than a 6x32 and a 4x32. Zen 4 keeps the split.
  const auto ten_rows = [&](const Machine& machine) {
    return ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 10, 20, 20, 1}, machine);
  };
  const KernelConfig zen5_10 = ten_rows(testing::SyntheticZen5Machine());
  EXPECT_EQ(zen5_10.mr, 10) << zen5_10.ToString();
  EXPECT_EQ(zen5_10.nr, 32) << zen5_10.ToString();
  EXPECT_LT(ten_rows(zen4).mr, 10) << ten_rows(zen4).ToString();
  // So on Intel's two-pipe cores (the Xeon ran it 1.10-1.19x). No tile wider than N there: its
  // columns past N run the edge kernel, and two shorter tiles beat it.
  EXPECT_EQ(ten_rows(two_pipes).mr, 10) << ten_rows(two_pipes).ToString();
  for (const Machine& machine : {testing::SyntheticZen5Machine(), two_pipes}) {
    const KernelConfig narrow = ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 10, 16, 32, 1}, machine);
    EXPECT_LE(narrow.nr, 16) << narrow.ToString();
  }
  for (const Machine& machine : {zen4, two_pipes}) {
    const KernelConfig long_rows = ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 32, 64, 1024, 1},
        machine);
    ASSERT_EQ(long_rows.family, KernelFamily::kDirect) << long_rows.ToString();
    EXPECT_LE(long_rows.mr, 8) << long_rows.ToString();
  }
  EXPECT_EQ(config(zen4, Trans::kYes, 16).mr, 16);
  // AVX2 (Zen 3) direct kernels are not unrolled: ku1 runs as fast as ku4 or faster there.
  const Machine zen3 = testing::SyntheticZen3Machine();
  for (std::int64_t size : {16, 48, 100, 128}) {
    const KernelConfig zen3_direct = config(zen3, Trans::kNo, size);
    ASSERT_EQ(zen3_direct.family, KernelFamily::kDirect) << zen3_direct.ToString();
    EXPECT_EQ(zen3_direct.k_unroll, 1) << zen3_direct.ToString();
  }
}

// The packed tile is two vectors wide with the most rows the FMA pipes take without crowding:
// 8x32 f32, bf16 and s8 and 8x16 f64 on Zen 4 (one zmm FMA or dot product per cycle; the
// 28-accumulator 14-row tiles run slower), 6x16 with AVX2's 16 registers. On a core with two
// 512-bit FMA pipes every GEMM takes the tile with the fewest loads per FMA or dot product, four
// vectors wide (6x64 f32, 6x32 f64, and 4x64 bf16 and s8, whose dot products take no more than
// 16 accumulators), f32 and f64 with the k block of a two-vector panel (512). The A
// block follows the tile (mc a multiple of mr). Measurements: docs/analytical-model.md, step 2.
TEST(DefaultConfigTest, PackedTileFillsTheFmaPipesWithoutCrowdingThem) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CpuFeatures zen4_cpu = testing::SyntheticZen4Machine().cpu;
  zen4_cpu.avx512_bf16 = zen4_cpu.avx512_vnni = true;
  const Machine zen4 =
      DescribeMachine(zen4_cpu, testing::SyntheticZen4Machine().topology, std::nullopt);
  CpuFeatures intel_cpu = zen4.cpu;
  intel_cpu.vendor = "GenuineIntel";
  intel_cpu.family = 6;
  intel_cpu.model = 85;
  const Machine two_pipes = DescribeMachine(intel_cpu, zen4.topology, std::nullopt);
  struct Case {
    const Machine* machine;
    DType dtype;
    int mr;
    int nr;
    int kc;  // 0: not checked
  };
  const Machine zen3 = testing::SyntheticZen3Machine();
  for (const Case& c : {Case{&zen4, DType::kF32, 8, 32, 512}, Case{&zen4, DType::kF64, 8, 16, 512},
                        Case{&zen4, DType::kBF16, 8, 32, 0}, Case{&zen4, DType::kS8, 8, 32, 0},
                        Case{&two_pipes, DType::kF32, 6, 64, 512},
                        Case{&two_pipes, DType::kF64, 6, 32, 512},
                        Case{&two_pipes, DType::kBF16, 4, 64, 0},
                        Case{&two_pipes, DType::kS8, 4, 64, 0},
                        Case{&zen3, DType::kF32, 6, 16, 0}, Case{&zen3, DType::kF64, 6, 8, 0},
                        // AVX2 bf16: 5x16 does not fit the registers (fits_registers)
                        Case{&zen3, DType::kBF16, 4, 16, 0}}) {
    const Problem problem{c.dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, 2048, 2048, 2048, 1};
    const KernelConfig packed = ModelConfig(problem, *c.machine);
    ASSERT_EQ(packed.family, KernelFamily::kPacked) << packed.ToString();
    EXPECT_EQ(packed.mr, c.mr) << packed.ToString();
    EXPECT_EQ(packed.nr, c.nr) << packed.ToString();
    if (c.kc > 0) {
      EXPECT_EQ(packed.kc, c.kc) << packed.ToString();
    }
    EXPECT_EQ(packed.mc % packed.mr, 0) << packed.ToString();
    EXPECT_TRUE(packed.Validate(problem, *c.machine).ok()) << packed.ToString();
  }
}

// The packed blocks split M and N evenly: as many blocks as the cache model needs, each no
// longer than whole tiles need. Blocks of the model rounded down to the tile left a thin one
// (f64 M = 128 in A blocks of 126: the last 2 rows streamed the whole packed B block; f32 1024^3
// in blocks of 252: 16 rows).
TEST(DefaultConfigTest, PackedBlocksSplitTheMatrixEvenly) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CpuFeatures intel_cpu = testing::SyntheticZen4Machine().cpu;
  intel_cpu.vendor = "GenuineIntel";
  intel_cpu.family = 6;
  intel_cpu.model = 85;
  const Machine two_pipes =
      DescribeMachine(intel_cpu, testing::SyntheticZen4Machine().topology, std::nullopt);
  const Machine zen4 = testing::SyntheticZen4Machine();
  for (const Machine* machine : {&two_pipes, &zen4}) {
    for (DType dtype : {DType::kF32, DType::kF64}) {
      for (std::int64_t extent : {1000, 1024, 1030, 2048, 3001, 20000}) {
        for (bool rows : {true, false}) {
          const std::int64_t m = rows ? extent : 2048;
          const std::int64_t n = rows ? 2048 : extent;
          const Problem problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, 4096, 1};
          const KernelConfig c = ModelConfig(problem, *machine);
          ASSERT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
          const std::int64_t block = rows ? c.mc : c.nc;
          const int tile = rows ? c.mr : c.nr;
          EXPECT_EQ(block % tile, 0) << c.ToString();
          EXPECT_LT(block, extent + tile) << c.ToString();  // no block past the matrix's tiles
          // Even: a block one tile shorter would take more blocks.
          const std::int64_t blocks = (extent + block - 1) / block;
          if (block > tile) {
            EXPECT_GT((extent + block - tile - 1) / (block - tile), blocks)
                << extent << (rows ? " rows: " : " columns: ") << c.ToString();
          }
          EXPECT_TRUE(c.Validate(problem, *machine).ok()) << c.ToString();
        }
      }
    }
  }
  const KernelConfig one_block =
      ModelConfig(Problem{DType::kF64, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128, 3072,
                            768, 1},
                    testing::SyntheticXeonMachine());
  ASSERT_EQ(one_block.family, KernelFamily::kPacked) << one_block.ToString();
  EXPECT_GE(one_block.mc, 128) << one_block.ToString();
}

// The packed B block (kc x nc) takes half of the core's L3 share, but never more than 4 MiB:
// the guests' reported L3 (508 MiB a core on Zen 5, 480 MiB on the Xeon, a whole 32 MiB CCD for
// two vCPUs on Zen 4) is shared with other tenants, and nc = N runs slower than 4 MiB blocks
// (docs/analytical-model.md, step 5).
TEST(DefaultConfigTest, PackedBBlockStaysWithinAFewMiBOfL3) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  constexpr std::int64_t kCap = std::int64_t{4} << 20;
  for (const Machine& machine : {testing::SyntheticZen5Machine(), testing::SyntheticXeonMachine(),
                                 testing::SyntheticZen4Machine()}) {
    for (DType dtype : {DType::kF32, DType::kF64}) {
      const Problem problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, 512, 4096, 4096, 1};
      const KernelConfig c = ModelConfig(problem, machine);
      ASSERT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
      const std::int64_t block_bytes =
          std::int64_t{c.kc} * c.nc * static_cast<std::int64_t>(DTypeSize(dtype));
      EXPECT_LE(block_bytes, kCap) << machine.cpu.brand << ": " << c.ToString();
      EXPECT_GT(block_bytes, kCap / 2) << machine.cpu.brand << ": " << c.ToString();
    }
  }
  // Under the cap the block follows the L3 share: 8 MiB for two cores, 2 MiB of B.
  Machine small_l3 = testing::SyntheticZen4Machine();
  small_l3.topology.caches[2].size_bytes = 8 << 20;
  small_l3 = DescribeMachine(small_l3.cpu, small_l3.topology, std::nullopt);
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 512, 4096, 4096,
                        1};
  const KernelConfig c = ModelConfig(problem, small_l3);
  ASSERT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
  const std::int64_t block_bytes = std::int64_t{c.kc} * c.nc * 4;
  EXPECT_LE(block_bytes, 2 << 20) << c.ToString();
  EXPECT_GT(block_bytes, 1 << 20) << c.ToString();
}

// Two threads share the packed B block (ic) only where A is at least as tall as B is wide;
// otherwise each reads only its own columns of B (jc), which runs wide problems faster and tall
// ones slower (docs/analytical-model.md, step 7).
TEST(DefaultConfigTest, ThreadsSplitTheLongerSideOfAPackedProblem) {
  const Machine xeon = testing::SyntheticXeonMachine();
  auto loop = [&](std::int64_t m, std::int64_t n, std::int64_t k, int threads) {
    const KernelConfig c = ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, threads}, xeon);
    EXPECT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
    return c.parallel_loop;
  };
  EXPECT_EQ(loop(128, 3072, 768, 2), ParallelLoop::kJc);
  EXPECT_EQ(loop(512, 4096, 4096, 2), ParallelLoop::kJc);
  EXPECT_EQ(loop(3072, 128, 768, 2), ParallelLoop::kIc);
  EXPECT_EQ(loop(1024, 1024, 1024, 2), ParallelLoop::kJc);
  EXPECT_EQ(loop(2048, 2048, 2048, 2), ParallelLoop::kIc);
  EXPECT_EQ(loop(2048, 2048, 2048, 1), ParallelLoop::kJc);
}

// Two threads split the columns of a square packed problem unless each has at least 768 rows,
// and the rows of a clearly tall one (M >= 2N), whether their cores share a cache (the
// synthetic Xeon) or not (the synthetic Zen 5: a private L3 each), for every GEMM type;
// docs/analytical-model.md, step 7.
TEST(DefaultConfigTest, SquareProblemsSplitColumnsUnlessEachThreadHasManyRows) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
    SCOPED_TRACE(ToString(dtype));
    for (const Machine& machine :
         {testing::SyntheticZen5Machine(), testing::SyntheticXeonMachine()}) {
      SCOPED_TRACE(machine.cpu.brand);
      auto loop = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
        const KernelConfig c = ModelConfig(
            Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 2}, machine);
        EXPECT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
        return c.parallel_loop;
      };
      EXPECT_EQ(loop(512, 512, 512), ParallelLoop::kJc);
      EXPECT_EQ(loop(1024, 1024, 1024), ParallelLoop::kJc);
      EXPECT_EQ(loop(1534, 1024, 1024), ParallelLoop::kJc);
      EXPECT_EQ(loop(1536, 1024, 1024), ParallelLoop::kIc);
      EXPECT_EQ(loop(1536, 1536, 1536), ParallelLoop::kIc);
      EXPECT_EQ(loop(1536, 1537, 1536), ParallelLoop::kJc);
      EXPECT_EQ(loop(2048, 1024, 1024), ParallelLoop::kIc);
      EXPECT_EQ(loop(3072, 128, 768), ParallelLoop::kIc);
    }
  }
}

// The bf16/s8 default reads A in place where it is k-contiguous (row-major, or column-major
// transposed: these problems keep their operands) and all of it fits one core's L2 (the synthetic
// Zen 5: 1 MiB).
TEST(DefaultConfigTest, LowPrecisionReadsAInPlaceWhereAIsKContiguousAndFitsL2) {
  const Machine zen5 = testing::SyntheticZen5Machine();
  auto in_place = [&](DType dtype, Layout layout, Trans ta, std::int64_t m, std::int64_t k) {
    const KernelConfig c =
        ModelConfig(Problem{dtype, layout, ta, Trans::kNo, m, 256, k, 1}, zen5);
    EXPECT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
    return c.a_in_place;
  };
  for (DType dtype : {DType::kBF16, DType::kS8}) {
    SCOPED_TRACE(ToString(dtype));
    EXPECT_TRUE(in_place(dtype, Layout::kRowMajor, Trans::kNo, 256, 256));
    EXPECT_FALSE(in_place(dtype, Layout::kRowMajor, Trans::kYes, 256, 256));
    EXPECT_FALSE(in_place(dtype, Layout::kColMajor, Trans::kNo, 256, 256));
    EXPECT_TRUE(in_place(dtype, Layout::kColMajor, Trans::kYes, 256, 256));
    EXPECT_FALSE(in_place(dtype, Layout::kRowMajor, Trans::kNo, 1024, 1024));  // 1 or 2 MiB
    // M is A's rows in either layout: 8 x 65536 fits L2 only as bytes (s8), not as bf16.
    EXPECT_EQ(in_place(dtype, Layout::kColMajor, Trans::kYes, 8, 65536), dtype == DType::kS8);
  }
}

// With two 512-bit FMA pipes the four-vector packed tile beats direct where A reaches a fifth
// of a 2 MiB L2, unless that tile would compute many columns past N (127x257x509 f64: 288 for
// 257). Zen 4 keeps A up to all of L2. See docs/analytical-model.md, step 1.
TEST(DefaultConfigTest, DirectAStaysInAFifthOfL2OnTwoPipeCores) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine xeon = testing::SyntheticXeonMachine();
  const Machine zen4 = testing::SyntheticZen4Machine();
  auto family = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                   std::int64_t k) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1},
                         machine)
        .family;
  };
  EXPECT_EQ(family(xeon, DType::kF32, 512, 512, 512), KernelFamily::kPacked);
  EXPECT_EQ(family(xeon, DType::kF64, 256, 256, 256), KernelFamily::kPacked);
  EXPECT_EQ(family(xeon, DType::kF64, 128, 768, 768), KernelFamily::kPacked);
  EXPECT_EQ(family(xeon, DType::kF32, 256, 256, 256), KernelFamily::kDirect);
  EXPECT_EQ(family(xeon, DType::kF32, 128, 768, 768), KernelFamily::kDirect);
  EXPECT_EQ(family(xeon, DType::kF64, 127, 257, 509), KernelFamily::kDirect);
  EXPECT_EQ(family(zen4, DType::kF32, 512, 512, 512), KernelFamily::kDirect);
}

// Direct k loops of 256 or more are unrolled by 4 with two 512-bit FMA pipes, where that pays,
// not shorter ones and not on Zen 4 or Zen 5 (docs/analytical-model.md, step 2).
TEST(DefaultConfigTest, LongDirectKLoopsUnrollOnTwoPipeCores) {
  auto config = [](const Machine& machine, std::int64_t m, std::int64_t n, std::int64_t k) {
    return ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1}, machine);
  };
  const Machine xeon = testing::SyntheticXeonMachine();
  const Machine zen4 = testing::SyntheticZen4Machine();
  const KernelConfig long_k = config(xeon, 128, 768, 768);
  ASSERT_EQ(long_k.family, KernelFamily::kDirect) << long_k.ToString();
  EXPECT_EQ(long_k.k_unroll, 4) << long_k.ToString();
  const KernelConfig short_k = config(xeon, 64, 64, 64);
  ASSERT_EQ(short_k.family, KernelFamily::kDirect) << short_k.ToString();
  EXPECT_EQ(short_k.k_unroll, 1) << short_k.ToString();
  const KernelConfig zen4_long_k = config(zen4, 128, 768, 768);
  ASSERT_EQ(zen4_long_k.family, KernelFamily::kDirect) << zen4_long_k.ToString();
  EXPECT_EQ(zen4_long_k.k_unroll, 1) << zen4_long_k.ToString();
  // Zen 5 has two 512-bit pipes too, but runs ku1 level or faster (much faster where B's panel
  // crowds its L2 sets).
  const KernelConfig zen5_long_k = config(testing::SyntheticZen5Machine(), 128, 768, 768);
  ASSERT_EQ(zen5_long_k.family, KernelFamily::kDirect) << zen5_long_k.ToString();
  EXPECT_EQ(zen5_long_k.k_unroll, 1) << zen5_long_k.ToString();
}

// Packed f32 and f64 k blocks of 256 or more are unrolled by 4 on Intel's two 512-bit FMA pipes,
// not shorter ones, not a one-row problem's, and not on Zen 3, Zen 4 or Zen 5
// (docs/analytical-model.md, step 2).
TEST(DefaultConfigTest, LongPackedKBlocksUnrollOnIntelTwoPipeCores) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  auto config = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                   std::int64_t k) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1},
                       machine);
  };
  const Machine xeon = testing::SyntheticXeonMachine();
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    const KernelConfig long_k = config(xeon, dtype, 512, 512, 512);
    ASSERT_EQ(long_k.family, KernelFamily::kPacked) << long_k.ToString();
    ASSERT_GE(long_k.kc, model::kMinUnrolledTwoPipeK) << long_k.ToString();
    EXPECT_EQ(long_k.k_unroll, 4) << long_k.ToString();
    const KernelConfig short_k = config(xeon, dtype, 1024, 1024, 200);
    ASSERT_EQ(short_k.family, KernelFamily::kPacked) << short_k.ToString();
    EXPECT_EQ(short_k.k_unroll, 1) << short_k.ToString();
  }
  // The boundary: a k block of 255 stays rolled, 256 unrolls.
  EXPECT_EQ(config(xeon, DType::kF32, 1024, 1024, 255).k_unroll, 1);
  EXPECT_EQ(config(xeon, DType::kF32, 1024, 1024, 256).k_unroll, 4);
  // One row's weights: the tile's k loop waits on B's stream, not its FMAs.
  const KernelConfig decode = PackedWeightsConfig(
      Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 1, 4096, 4096, 1}, xeon);
  ASSERT_EQ(decode.family, KernelFamily::kPacked) << decode.ToString();
  EXPECT_EQ(decode.k_unroll, 1) << decode.ToString();
  const KernelConfig zen4 = config(testing::SyntheticZen4Machine(), DType::kF32, 2048, 2048, 2048);
  ASSERT_EQ(zen4.family, KernelFamily::kPacked) << zen4.ToString();
  EXPECT_EQ(zen4.k_unroll, 1) << zen4.ToString();
  const KernelConfig zen5 = config(testing::SyntheticZen5Machine(), DType::kF32, 2048, 2048, 2048);
  ASSERT_EQ(zen5.family, KernelFamily::kPacked) << zen5.ToString();
  EXPECT_EQ(zen5.k_unroll, 1) << zen5.ToString();
  const KernelConfig avx2 = config(testing::SyntheticZen3Machine(), DType::kF32, 2048, 2048, 2048);
  ASSERT_EQ(avx2.family, KernelFamily::kPacked) << avx2.ToString();
  EXPECT_EQ(avx2.k_unroll, 1) << avx2.ToString();
}

// The bf16 and s8 vector kernels take f32's k block, that of a panel two vectors of 32-bit lanes
// wide (so a four-vector tile runs as many group steps between C updates as f32's runs k
// steps), and on Zen 5 (its core facts) unroll k blocks of 256 or more by 4; not shorter ones,
// not a problem with fewer rows than the tile, not on Zen 4 (docs/low-precision.md).
TEST(DefaultConfigTest, LowpVectorKBlocksFollowF32sAndUnrollOnZen5) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen5 = testing::WithDotProducts(testing::SyntheticZen5Machine());
  const Machine zen4 = testing::WithDotProducts(testing::SyntheticZen4Machine());
  auto config = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                   std::int64_t k) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1},
                       machine);
  };
  for (const Machine* machine : {&zen5, &zen4}) {
    const KernelConfig f32 = config(*machine, DType::kF32, 2048, 2048, 8192);
    ASSERT_EQ(f32.family, KernelFamily::kPacked) << f32.ToString();
    for (const DType dtype : {DType::kBF16, DType::kS8}) {
      const int elem_bytes = dtype == DType::kBF16 ? 2 : 1;
      const KernelConfig long_k = config(*machine, dtype, 2048, 2048, 8192);
      ASSERT_EQ(long_k.family, KernelFamily::kPacked) << long_k.ToString();
      EXPECT_EQ(long_k.kc * elem_bytes, f32.kc * 4) << long_k.ToString() << " " << f32.ToString();
      EXPECT_EQ(long_k.k_unroll, machine == &zen5 ? 4 : 1) << long_k.ToString();
    }
  }
  EXPECT_EQ(config(zen5, DType::kBF16, 2048, 2048, 8192).nr, 64);  // a four-vector tile
  for (const DType dtype : {DType::kBF16, DType::kS8}) {
    const KernelConfig short_k = config(zen5, dtype, 1024, 1024, 200);
    ASSERT_EQ(short_k.family, KernelFamily::kPacked) << short_k.ToString();
    EXPECT_EQ(short_k.k_unroll, 1) << short_k.ToString();
    const KernelConfig few_rows = config(zen5, dtype, 2, 1024, 1024);
    ASSERT_EQ(few_rows.family, KernelFamily::kPacked) << few_rows.ToString();
    ASSERT_GT(few_rows.mr, 2) << few_rows.ToString();
    EXPECT_EQ(few_rows.k_unroll, 1) << few_rows.ToString();
  }
  // The boundary: a k block of 252 stays rolled, 256 unrolls.
  EXPECT_EQ(config(zen5, DType::kS8, 1024, 1024, 252).k_unroll, 1);
  EXPECT_EQ(config(zen5, DType::kS8, 1024, 1024, 256).k_unroll, 4);
  // On two threads, where the dot products take 128 bytes a cycle (Zen 5's two zmm pipes), the
  // B micro-panel (kc x nr) stays in two thirds of L1, shorter than on one, and K splits into
  // even blocks (no thin last one); with 64 (Zen 4's one pipe) it is as long as on one thread.
  auto two_threads = [](const Machine& machine, DType dtype, std::int64_t k) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, 2048, 2048, k, 2},
                       machine);
  };
  for (const Machine* machine : {&zen5, &zen4}) {
    const std::int64_t l1 = CacheBudgetOf(machine->topology).l1d;
    for (const DType dtype : {DType::kBF16, DType::kS8}) {
      const int elem_bytes = dtype == DType::kBF16 ? 2 : 1;
      const KernelConfig one = config(*machine, dtype, 2048, 2048, 8192);
      const KernelConfig two = two_threads(*machine, dtype, 8192);
      ASSERT_EQ(two.family, KernelFamily::kPacked) << two.ToString();
      if (machine == &zen4) {
        EXPECT_EQ(two.kc, one.kc) << two.ToString() << " " << one.ToString();
        continue;
      }
      const std::int64_t panel_bytes = std::int64_t{two.kc} * two.nr * elem_bytes;
      EXPECT_LE(panel_bytes, l1 * 2 / 3) << two.ToString();
      EXPECT_GT(panel_bytes + 16 * two.nr * elem_bytes, l1 * 2 / 3) << two.ToString();
      EXPECT_LT(two.kc, one.kc) << two.ToString() << " " << one.ToString();
      // 1100 is 76 past 1024, a whole number of either type's L1 panels: even blocks instead.
      const std::int64_t k = 1100;
      const KernelConfig uneven = two_threads(*machine, dtype, k);
      const std::int64_t blocks = (k + uneven.kc - 1) / uneven.kc;
      EXPECT_GE(k - (blocks - 1) * uneven.kc, uneven.kc / 2) << uneven.ToString();
    }
  }
}

// Row-major weights packed once take k blocks twice as deep as the plain call's where the vector
// kernels stream their B micro-panel from L2 (no B block is packed in the call), K split into
// even blocks: on Zen 4, f32, bf16 and s8, 1 and 2 threads, and for winners lent to them. Zen 5's
// bf16 and s8 on two threads keep their L1 panel's blocks, and column-major weights (A's panels)
// the plain call's.
TEST(DefaultConfigTest, PackedWeightsTakeLongerEvenKBlocks) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen4 = testing::WithDotProducts(testing::SyntheticZen4Machine());
  const Machine zen5 = testing::WithDotProducts(testing::SyntheticZen5Machine());
  auto configs = [](const Machine& machine, DType dtype, Layout layout, std::int64_t k,
                    int threads) {
    const Problem plain{dtype, layout, Trans::kNo, Trans::kNo, 2048, 2048, k, threads};
    Problem weights = plain;
    weights.form = CallForm::kPackedB;
    return std::pair{ModelConfig(plain, machine), PackedWeightsConfig(weights, machine)};
  };
  for (const DType dtype : {DType::kF32, DType::kBF16, DType::kS8}) {
    const int elem_bytes = dtype == DType::kF32 ? 4 : dtype == DType::kBF16 ? 2 : 1;
    for (int threads : {1, 2}) {
      const auto [plain, weights] = configs(zen4, dtype, Layout::kRowMajor, 8192, threads);
      ASSERT_EQ(weights.family, KernelFamily::kPacked) << weights.ToString();
      EXPECT_EQ(weights.kc, 2 * plain.kc) << weights.ToString() << " " << plain.ToString();
      EXPECT_EQ(weights.kc * elem_bytes, 4096) << weights.ToString();
      EXPECT_TRUE(weights.Validate(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo,
                                           2048, 2048, 8192, threads},
                                   zen4))
          << weights.ToString();
      // K = 2304 in even blocks no longer than those: f32 three of 768 (not two of 1024 and a
      // thin one of 256), bf16 two of 1152, s8 one.
      const KernelConfig weights_2304 =
          configs(zen4, dtype, Layout::kRowMajor, 2304, threads).second;
      EXPECT_EQ(weights_2304.kc, dtype == DType::kF32 ? 768 : dtype == DType::kBF16 ? 1152 : 2304)
          << weights_2304.ToString();
      const auto [plain_columns, weights_columns] =
          configs(zen4, dtype, Layout::kColMajor, 8192, threads);
      EXPECT_EQ(weights_columns.kc, plain_columns.kc) << weights_columns.ToString();
    }
    // A winner whose blocks spanned its tiny problem, lent to weights (LentConfig), takes the
    // weights' k block where they are row-major, the plain call's where they are column-major.
    const KernelConfig row_major_weights = configs(zen4, dtype, Layout::kRowMajor, 8192, 1).second;
    for (const Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      const auto [plain, weights] = configs(zen4, dtype, layout, 8192, 1);
      ASSERT_NE(row_major_weights.kc, plain.kc) << plain.ToString();  // two distinct answers
      Problem tiny{dtype, layout, Trans::kNo, Trans::kNo, 2, 2, 2, 1};
      tiny.form = CallForm::kPackedB;
      Problem large{dtype, layout, Trans::kNo, Trans::kNo, 2048, 2048, 8192, 1};
      large.form = CallForm::kPackedB;
      KernelConfig tiny_winner = weights;
      tiny_winner.mc = tiny_winner.mr;
      tiny_winner.nc = tiny_winner.nr;
      tiny_winner.kc = dtype == DType::kS8 ? 4 : 2;
      const KernelConfig lent = LentConfig(tiny_winner, tiny, large, zen4);
      EXPECT_EQ(lent.kc, layout == Layout::kRowMajor ? weights.kc : plain.kc) << lent.ToString();
    }
    if (dtype == DType::kF32) continue;
    const auto [plain, weights] = configs(zen5, dtype, Layout::kRowMajor, 8192, 2);
    EXPECT_EQ(weights.kc, plain.kc) << weights.ToString() << " " << plain.ToString();
    EXPECT_EQ(weights.mc, plain.mc) << weights.ToString() << " " << plain.ToString();
  }
}

// Beside an A read in place from L2, a row-major B's block narrows to the bytes of each row its
// packing reads at a time (kPackBRowStepBytes) where a thread's block would take more than a
// quarter of L2: it then stays in L2 from its packing to its last tile (docs/low-precision.md).
// Not where A is packed, B is k-contiguous, or the block already fits.
TEST(DefaultConfigTest, LowpBBlockNarrowsBesideAnAReadInPlace) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  CpuFeatures cpu = testing::SyntheticZen5Machine().cpu;
  cpu.avx512_bf16 = cpu.avx512_vnni = true;
  const Machine zen5 = DescribeMachine(cpu, testing::SyntheticZen5Machine().topology, std::nullopt);
  const std::int64_t l2 = CacheBudgetOf(zen5.topology).l2;
  auto config = [&](DType dtype, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                    std::int64_t k, int threads) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, trans_a, trans_b, m, n, k, threads},
                       zen5);
  };
  for (const DType dtype : {DType::kBF16, DType::kS8}) {
    const std::int64_t elem = dtype == DType::kBF16 ? 2 : 1;
    const std::int64_t row_step_columns = kPackBRowStepBytes / elem;
    for (const std::int64_t n : {std::int64_t{768}, std::int64_t{3072}}) {
      const KernelConfig narrowed = config(dtype, Trans::kNo, Trans::kNo, 128, n, 768, 1);
      ASSERT_EQ(narrowed.family, KernelFamily::kPacked) << narrowed.ToString();
      ASSERT_TRUE(narrowed.a_in_place) << narrowed.ToString();
      EXPECT_EQ(narrowed.nc, row_step_columns) << narrowed.ToString();
      const KernelConfig a_packed = config(dtype, Trans::kYes, Trans::kNo, 128, n, 768, 1);
      ASSERT_FALSE(a_packed.a_in_place) << a_packed.ToString();
      EXPECT_GT(std::int64_t{a_packed.kc} * a_packed.nc * elem, l2 / 4) << a_packed.ToString();
      const KernelConfig b_k_contiguous = config(dtype, Trans::kNo, Trans::kYes, 128, n, 768, 1);
      ASSERT_TRUE(b_k_contiguous.a_in_place) << b_k_contiguous.ToString();
      EXPECT_EQ(b_k_contiguous.nc, a_packed.nc) << b_k_contiguous.ToString();
    }
    // Two threads' shorter k blocks: each thread's share of a block of N = 768 fits.
    const KernelConfig fits = config(dtype, Trans::kNo, Trans::kNo, 128, 768, 3072, 2);
    ASSERT_TRUE(fits.a_in_place) << fits.ToString();
    ASSERT_EQ(fits.parallel_loop, ParallelLoop::kJc) << fits.ToString();
    EXPECT_LE(std::int64_t{fits.kc} * std::min<std::int64_t>(fits.nc, 384) * elem, l2 / 4)
        << fits.ToString();
    EXPECT_GT(fits.nc, row_step_columns) << fits.ToString();
    const KernelConfig wide = config(dtype, Trans::kNo, Trans::kNo, 128, 3072, 768, 2);
    EXPECT_EQ(wide.nc, row_step_columns) << wide.ToString();
  }
}

// Small problems on an AVX-512 machine take an AVX2 tile where it covers N exactly and the
// AVX-512 tile would need a padded partial panel, if the model finds it 10% faster: on Zen 4
// two ymm FMAs per cycle are as fast as one zmm. Not where the AVX2 tile needs a partial panel
// too (12^3), not for large problems, and not where two 512-bit FMA pipes make AVX-512 twice as
// fast, unless N is one AVX2 vector: then both tiles issue one FMA a row and the AVX2 one needs
// no masks. See docs/analytical-model.md, step 2.
TEST(DefaultConfigTest, SmallProblemsTakeAnAvx2TileThatCoversN) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  auto config = [](const Machine& machine, std::int64_t m, std::int64_t n, std::int64_t k) {
    return ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1}, machine);
  };
  const Machine zen4 = testing::SyntheticZen4Machine();
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {8, 8, 8}, {24, 24, 24}, {8, 24, 100}, {16, 8, 16}}) {
    const KernelConfig c = config(zen4, m, n, k);
    EXPECT_EQ(c.family, KernelFamily::kDirect) << c.ToString();
    EXPECT_EQ(c.isa, IsaLevel::kAvx2) << m << "x" << n << "x" << k << ": " << c.ToString();
    EXPECT_EQ(n % c.nr, 0) << c.ToString();
    EXPECT_EQ(c.k_unroll, 1) << c.ToString();
    EXPECT_TRUE(c.Validate(Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n,
                                   k, 1},
                           zen4)
                    .ok());
  }
  for (std::int64_t size : {12, 16, 100, 512}) {
    EXPECT_EQ(config(zen4, size, size, size).isa, IsaLevel::kAvx512) << size;
  }
  CpuFeatures intel_cpu = zen4.cpu;
  intel_cpu.vendor = "GenuineIntel";
  intel_cpu.family = 6;
  const Machine two_pipes = DescribeMachine(intel_cpu, zen4.topology, std::nullopt);
  EXPECT_EQ(config(two_pipes, 24, 24, 24).isa, IsaLevel::kAvx512);
  EXPECT_EQ(config(two_pipes, 8, 24, 100).isa, IsaLevel::kAvx512);
  EXPECT_EQ(config(two_pipes, 8, 8, 8).isa, IsaLevel::kAvx2);
  const Machine zen5 = testing::SyntheticZen5Machine();
  for (const auto& [dtype, m, n, k] :
       std::vector<std::tuple<DType, std::int64_t, std::int64_t, std::int64_t>>{
           {DType::kF32, 8, 8, 8}, {DType::kF32, 12, 8, 12}, {DType::kF32, 20, 8, 20},
           {DType::kF32, 100, 8, 100}, {DType::kF64, 8, 4, 8}, {DType::kF64, 4, 4, 4}}) {
    const KernelConfig c =
        ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1}, zen5);
    EXPECT_EQ(c.isa, IsaLevel::kAvx2) << m << "x" << n << "x" << k << ": " << c.ToString();
    EXPECT_EQ(c.nr, n) << c.ToString();
  }
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {24, 24, 24}, {8, 24, 100}, {48, 24, 64}, {16, 8, 16}}) {
    EXPECT_EQ(config(zen5, m, n, k).isa, IsaLevel::kAvx512) << m << "x" << n << "x" << k;
  }
}

// A column-major problem runs as its row-major transpose (C^T = op(B)^T op(A)^T): M and N
// trade places and so do the operands, and the default is that of the transpose.
TEST(DefaultConfigTest, ColumnMajorProblemsGetTheirTransposesDefault) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen4Machine()}) {
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {3, 40, 40}, {40, 3, 40}, {200, 16, 64}, {127, 257, 509}, {128, 3072, 768}}) {
      for (Trans trans_a : {Trans::kNo, Trans::kYes}) {
        const Problem column{DType::kF32, Layout::kColMajor, trans_a, Trans::kNo, m, n, k, 2};
        const Problem transpose{DType::kF32, Layout::kRowMajor, Trans::kNo, trans_a, n, m, k, 2};
        EXPECT_EQ(ModelConfig(column, machine), ModelConfig(transpose, machine))
            << column.ToString();
        EXPECT_EQ(AnalyticalAlternatives(column, machine),
                  AnalyticalAlternatives(transpose, machine))
            << column.ToString();
      }
    }
    // The view matters: a 3-row row-major problem gets a short tile, its column-major twin (40
    // rows of 3 in the view) a tall one.
    const Problem thin_rows{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 3, 40, 40, 1};
    Problem thin_columns = thin_rows;
    thin_columns.layout = Layout::kColMajor;
    EXPECT_LE(ModelConfig(thin_rows, machine).mr, 4);
    EXPECT_GE(ModelConfig(thin_columns, machine).mr, 8);
  }
}

// The family boundary (docs/analytical-model.md, step 1). On Zen 4 with AVX-512 the direct
// family wins where its B panel (k x nr) fits in a quarter of L2 and A in L2 (K up to 1536), and
// where K in blocks keeps the A block and the panel in half of L2 with blocks of 384 or more
// (f32 M <= 256, f64 M <= 128); it loses beyond that. The AVX2 tiles lose at 512^3, so there
// only problems that fit in half of L2 are direct. The other family is offered as the
// alternative near the boundary.
TEST(DefaultConfigTest, FamilyBoundaryFollowsTheDirectBPanel) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  auto config = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                   std::int64_t k) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1},
                         machine);
  };
  auto family = [&](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                    std::int64_t k) { return config(machine, dtype, m, n, k).family; };
  constexpr KernelFamily kDirect = KernelFamily::kDirect;
  constexpr KernelFamily kPacked = KernelFamily::kPacked;
  const Machine zen4 = testing::SyntheticZen4Machine();
  ASSERT_EQ(zen4.kernel_isa, IsaLevel::kAvx512);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {128, 768, 768}, {128, 3072, 768}, {256, 256, 256}}) {
      const KernelConfig whole = config(zen4, dtype, m, n, k);
      EXPECT_EQ(whole.family, kDirect) << ToString(dtype) << " " << whole.ToString();
      EXPECT_EQ(whole.kc, 0) << ToString(dtype) << " " << whole.ToString();
    }
    // K = 3072 and 4096 with M = 128: A or the panel would not stay in L2 whole.
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {128, 768, 3072}, {128, 4096, 4096}}) {
      const KernelConfig blocked = config(zen4, dtype, m, n, k);
      EXPECT_EQ(blocked.family, kDirect) << ToString(dtype) << " " << blocked.ToString();
      EXPECT_GE(blocked.kc, 384) << ToString(dtype) << " " << blocked.ToString();
      EXPECT_LT(blocked.kc, k) << ToString(dtype) << " " << blocked.ToString();
      EXPECT_LE((m + blocked.nr) * blocked.kc * static_cast<std::int64_t>(DTypeSize(dtype)),
                std::int64_t{1} << 19)
          << ToString(dtype) << " " << blocked.ToString();
    }
    EXPECT_EQ(family(zen4, dtype, 1024, 1024, 1024), kPacked) << ToString(dtype);
    EXPECT_EQ(family(zen4, dtype, 2048, 2048, 2048), kPacked) << ToString(dtype);
    EXPECT_EQ(family(zen4, dtype, 512, 4096, 4096), kPacked) << ToString(dtype);
    EXPECT_EQ(family(zen4, dtype, 512, 512, 2048), kPacked) << ToString(dtype);
  }
  EXPECT_EQ(family(zen4, DType::kF32, 256, 1024, 4096), kDirect);
  EXPECT_EQ(family(zen4, DType::kF64, 256, 1024, 4096), kPacked);
  EXPECT_EQ(family(zen4, DType::kF32, 512, 512, 512), kDirect);
  EXPECT_EQ(family(zen4, DType::kF32, 127, 257, 509), kDirect);
  EXPECT_EQ(config(zen4, DType::kF32, 127, 257, 509).kc, 0);
  // Longer K than kMaxWholeDirectK: in blocks even where the panel would fit.
  EXPECT_GT(config(zen4, DType::kF32, 64, 2048, 2048).kc, 0);
  EXPECT_GT(config(zen4, DType::kF32, 100, 100, 2000).kc, 0);

  const Machine zen3 = testing::SyntheticZen3Machine();
  ASSERT_EQ(zen3.kernel_isa, IsaLevel::kAvx2);
  EXPECT_EQ(family(zen3, DType::kF32, 100, 100, 100), kDirect);
  EXPECT_EQ(family(zen3, DType::kF32, 128, 768, 768), kPacked);
  EXPECT_EQ(family(zen3, DType::kF32, 512, 512, 512), kPacked);
  EXPECT_EQ(family(zen3, DType::kF32, 100, 100, 2000), kPacked);
  EXPECT_EQ(family(zen3, DType::kF32, 128, 768, 3072), kPacked);
  // Few rows stay direct on AVX2 whatever the footprint (kMaxFewRowsDirect), the whole K in one
  // pass, up to K = kMaxWholeDirectK; past it, and from 17 rows, the footprint rule decides.
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {2, 768, 768}, {6, 256, 256}, {16, 1024, 256}, {16, 256, 1536}, {8, 4096, 1024}}) {
      const KernelConfig few = config(zen3, dtype, m, n, k);
      EXPECT_EQ(few.family, kDirect) << ToString(dtype) << " " << m << "x" << n << "x" << k;
      EXPECT_EQ(few.kc, 0) << ToString(dtype) << " " << few.ToString();
    }
    EXPECT_EQ(family(zen3, dtype, 17, 768, 768), kPacked) << ToString(dtype);
    EXPECT_EQ(family(zen3, dtype, 16, 256, 1537), kPacked) << ToString(dtype);
    EXPECT_EQ(family(zen3, dtype, 4, 768, 3072), kPacked) << ToString(dtype);
  }

  const Problem near{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128, 768, 768, 1};
  const std::vector<KernelConfig> alternatives = AnalyticalAlternatives(near, zen4);
  ASSERT_EQ(alternatives.size(), 1u);
  EXPECT_EQ(alternatives[0].family, kPacked);
  EXPECT_TRUE(alternatives[0].Validate(near, zen4).ok());
  // Packed by default, but blocks of 256 come close enough for one measurement.
  const Problem blocked_near{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 512, 512,
                             2048, 1};
  const std::vector<KernelConfig> blocked_alternatives =
      AnalyticalAlternatives(blocked_near, zen4);
  ASSERT_EQ(blocked_alternatives.size(), 1u);
  EXPECT_EQ(blocked_alternatives[0].family, kDirect);
  EXPECT_GT(blocked_alternatives[0].kc, 0);
  EXPECT_TRUE(blocked_alternatives[0].Validate(blocked_near, zen4).ok());
  const Problem far{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 4096, 4096, 4096, 1};
  EXPECT_TRUE(AnalyticalAlternatives(far, zen4).empty());
}

// On a core with two 512-bit FMA pipes, a direct tile's B panel, read in place with rows N
// elements apart, must keep its lines in half the ways of the L2 sets they share
// (docs/analytical-model.md, step 1). On the Xeon (2 MiB, 16-way L2, 2048 sets), rows 12 KiB
// apart (N = 3072 f32, 1536 f64) share 32 places, so a 768-row panel holds 24 lines in a set and
// runs far behind packed: packed there, as at N = 4096; 768 rows 3 KiB apart (128 places, 6
// lines a set) stay direct and whole, and at K = 3072 the blocks are cut to 1024 rows (8 lines a
// set). Zen 4, one zmm FMA per cycle, runs such panels faster direct and keeps them
// (FamilyBoundaryFollowsTheDirectBPanel). The packed blocks stay at their caps on the larger
// L2: k blocks of 512 and an A block of 512 KiB (plus less than a tile of rows, BalancedBlock).
TEST(DefaultConfigTest, DirectBPanelKeepsItsL2SetsOnTwoPipeCores) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine xeon = testing::SyntheticXeonMachine();
  ASSERT_EQ(xeon.kernel_isa, IsaLevel::kAvx512);
  auto config = [&](DType dtype, std::int64_t m, std::int64_t n, std::int64_t k) {
    return ModelConfig(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1},
                         xeon);
  };
  for (const auto& [dtype, m, n, k] :
       std::vector<std::tuple<DType, std::int64_t, std::int64_t, std::int64_t>>{
           {DType::kF32, 128, 3072, 768},
           {DType::kF64, 128, 1536, 768},
           {DType::kF32, 512, 4096, 4096},
           {DType::kF64, 512, 4096, 4096},
           {DType::kF32, 128, 4096, 4096}}) {
    const KernelConfig packed = config(dtype, m, n, k);
    EXPECT_EQ(packed.family, KernelFamily::kPacked) << packed.ToString();
    const auto elem = static_cast<std::int64_t>(DTypeSize(dtype));
    EXPECT_EQ(packed.kc, 512) << packed.ToString();
    EXPECT_LE((packed.mc - packed.mr) * packed.kc * elem, std::int64_t{512} << 10)
        << packed.ToString();
  }
  const KernelConfig whole = config(DType::kF32, 128, 768, 768);
  EXPECT_EQ(whole.family, KernelFamily::kDirect) << whole.ToString();
  EXPECT_EQ(whole.kc, 0) << whole.ToString();
  // With M = 128 the A block of 1024 rows (512 KiB) passes a fifth of L2: packed
  // (DirectAStaysInAFifthOfL2OnTwoPipeCores); M = 64 keeps the blocks.
  EXPECT_EQ(config(DType::kF32, 128, 768, 3072).family, KernelFamily::kPacked);
  const KernelConfig blocked = config(DType::kF32, 64, 768, 3072);
  ASSERT_EQ(blocked.family, KernelFamily::kDirect) << blocked.ToString();
  EXPECT_GE(blocked.kc, 384) << blocked.ToString();
  EXPECT_LE(blocked.kc, 1024) << blocked.ToString();
  // Small problems are direct whatever their stride: their panels have few rows.
  EXPECT_EQ(config(DType::kF32, 64, 4096, 64).family, KernelFamily::kDirect);
  EXPECT_EQ(config(DType::kF32, 16, 16, 16).family, KernelFamily::kDirect);

  const Machine zen4 = testing::SyntheticZen4Machine();
  EXPECT_EQ(ModelConfig(Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 128,
                                  3072, 768, 1},
                          zen4)
                .family,
            KernelFamily::kDirect);
}

// The A a direct problem reads in place is bounded in bytes on two-pipe cores (410 KiB, or half
// of L2 where less), not as a fifth of L2: on Zen 5's 1 MiB L2 a fifth (205 KiB) would send
// 128x768x768 and 256^3 to packed, which runs them slower than direct; 128x768x3072 runs direct
// in k blocks (A block 256 KiB). Past the bound packed stays: 512^3 (A 1 MiB), 384^3 (576 KiB),
// 1024^3. See docs/analytical-model.md, step 1.
TEST(DefaultConfigTest, DirectABoundIsInBytesOnTwoPipeCores) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen5 = testing::SyntheticZen5Machine();
  ASSERT_EQ(zen5.kernel_isa, IsaLevel::kAvx512);
  auto config = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    return ModelConfig(
        Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1}, zen5);
  };
  for (const auto& [m, n, k] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {128, 768, 768}, {256, 256, 256}, {128, 768, 3072}}) {
    const KernelConfig direct = config(m, n, k);
    EXPECT_EQ(direct.family, KernelFamily::kDirect) << direct.ToString();
    EXPECT_LE(m * (direct.kc > 0 ? direct.kc : k) * 4, std::int64_t{410} << 10)
        << direct.ToString();
  }
  EXPECT_GT(config(128, 768, 3072).kc, 0);
  for (const auto& [m, n, k] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {512, 512, 512}, {384, 384, 384}, {1024, 1024, 1024}}) {
    const KernelConfig packed = config(m, n, k);
    EXPECT_EQ(packed.family, KernelFamily::kPacked) << packed.ToString();
  }
}

// On Zen 5 a direct B panel that crowds its L2 sets (B's rows 12 or 16 KiB apart) streams from
// L3 fast enough where M <= 128, so the k blocks stay long (at most 512 rows) instead of being cut
// until the panel fits, which would send these shapes to packed, slower on 1 and 2 threads: with
// 8 rows, which read the streamed panel least often, and not unrolled. Past 128 rows packing B
// pays, and the Xeon, whose L3 does not keep up, still shortens the blocks. See
// docs/analytical-model.md, step 1.
TEST(DefaultConfigTest, SmallMKeepsCrowdedBPanelsDirectOnZen5) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen5 = testing::SyntheticZen5Machine();
  ASSERT_EQ(zen5.kernel_isa, IsaLevel::kAvx512);
  auto config = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                   std::int64_t k, int threads) {
    return ModelConfig(
        Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, threads}, machine);
  };
  for (const auto& [m, n, k] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {128, 3072, 768}, {128, 4096, 4096}, {64, 4096, 4096}, {32, 4096, 4096},
           {96, 3072, 768}, {128, 11008, 4096}}) {
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      for (const int threads : {1, 2}) {
        const KernelConfig direct = config(zen5, dtype, m, n, k, threads);
        EXPECT_EQ(direct.family, KernelFamily::kDirect) << m << "x" << n << "x" << k << " "
                                                        << direct.ToString();
        EXPECT_GT(direct.kc, 0) << direct.ToString();
        EXPECT_LE(direct.kc, 512) << direct.ToString();
        EXPECT_GE(direct.mr, 8) << direct.ToString();
        EXPECT_EQ(direct.k_unroll, 1) << direct.ToString();
        EXPECT_TRUE(direct.Validate(Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m,
                                            n, k, threads},
                                    zen5))
            << direct.ToString();
      }
    }
  }
  for (const auto& [m, n, k] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {256, 3072, 768}, {512, 4096, 4096}}) {
    EXPECT_EQ(config(zen5, DType::kF32, m, n, k, 1).family, KernelFamily::kPacked)
        << m << "x" << n << "x" << k;
  }
  const Machine xeon = testing::SyntheticXeonMachine();
  EXPECT_EQ(config(xeon, DType::kF32, 128, 3072, 768, 1).family, KernelFamily::kPacked);
  EXPECT_EQ(config(xeon, DType::kF32, 128, 4096, 4096, 1).family, KernelFamily::kPacked);
}

// The direct tile order (docs/analytical-model.md, step 8): row panels first on one thread where
// k is short and B's and C's panels, rows N elements apart, crowd L1 sets; column panels first
// where the rows spread over the sets, where k is long, and with more threads.
TEST(DefaultConfigTest, ShortKOverCrowdedL1SetsVisitsRowPanelsFirst) {
  auto config = [](const Machine& machine, DType dtype, std::int64_t m, std::int64_t n,
                   std::int64_t k, int threads) {
    return ModelConfig(
        Problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, threads}, machine);
  };
  auto shape = [](const KernelConfig& c, std::int64_t m, std::int64_t n, std::int64_t k) {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
           c.ToString();
  };
  // Zen 3's L2 of 512 KiB sends the larger of these to the packed family; 33x1024x17 stays.
  const KernelConfig zen3 = config(testing::SyntheticZen3Machine(), DType::kF32, 33, 1024, 17, 1);
  EXPECT_EQ(zen3.family, KernelFamily::kDirect) << zen3.ToString();
  EXPECT_EQ(zen3.tile_order, TileOrder::kRowPanels) << zen3.ToString();
  const Machine machine = testing::SyntheticZen5Machine();
  for (const auto& [dtype, m, n, k] :
       std::vector<std::tuple<DType, std::int64_t, std::int64_t, std::int64_t>>{
           {DType::kF32, 33, 4096, 17}, {DType::kF32, 33, 1024, 17},
           {DType::kF32, 16, 4096, 16}, {DType::kF32, 64, 2048, 32},
           {DType::kF64, 33, 2048, 17}, {DType::kF64, 64, 1024, 32}}) {
    const KernelConfig c = config(machine, dtype, m, n, k, 1);
    EXPECT_EQ(c.family, KernelFamily::kDirect) << shape(c, m, n, k);
    EXPECT_EQ(c.tile_order, TileOrder::kRowPanels) << shape(c, m, n, k);
    EXPECT_EQ(config(machine, dtype, m, n, k, 2).tile_order, TileOrder::kColumnPanels)
        << shape(c, m, n, k) << " on 2 threads";
  }
  for (const auto& [m, n, k] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {33, 4000, 17}, {96, 512, 96}, {64, 512, 64}, {16, 16, 16}, {100, 100, 100}}) {
    const KernelConfig c = config(machine, DType::kF32, m, n, k, 1);
    EXPECT_EQ(c.tile_order, TileOrder::kColumnPanels) << shape(c, m, n, k);
  }
}

// GEMV rows in flight (docs/analytical-model.md, step 1): the axpy form (the matrix's rows along
// the output) streams eight rows where a row is longer than a 4 KiB page or the matrix exceeds
// the core's L3 share (16 MiB on the synthetic machines), four otherwise; the dot form keeps
// four. Whatever the rows, the kernel exists and the config validates.
TEST(DefaultConfigTest, GemvRowsFollowRowLengthAndMatrixSize) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (const Machine& machine :
       {testing::SyntheticZen3Machine(), testing::SyntheticZen4Machine()}) {
    auto config = [&](DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                      Trans trans_a = Trans::kNo, Trans trans_b = Trans::kNo) {
      const Problem problem{dtype, Layout::kRowMajor, trans_a, trans_b, m, n, k, 1};
      const KernelConfig c = ModelConfig(problem, machine);
      EXPECT_EQ(c.family, KernelFamily::kGemv) << problem.ToString();
      EXPECT_TRUE(c.Validate(problem, machine)) << problem.ToString() << " " << c.ToString();
      return c;
    };
    // Axpy form, rows along N: 4 KiB rows in L3 keep four, longer rows or more than L3 eight.
    EXPECT_EQ(config(DType::kF32, 1, 1024, 1024).mr, 4);
    EXPECT_EQ(config(DType::kF32, 1, 1025, 1024).mr, 8);
    EXPECT_EQ(config(DType::kF32, 1, 2048, 512).mr, 8);
    EXPECT_EQ(config(DType::kF32, 1, 1024, 4096).mr, 8);  // 16 MiB: the L3 share
    EXPECT_EQ(config(DType::kF32, 1, 1024, 4095).mr, 4);
    EXPECT_EQ(config(DType::kF64, 1, 1024, 1024).mr, 8);  // 8 KiB rows
    // N = 1 with A transposed is the axpy form too (A's storage rows run along M).
    EXPECT_EQ(config(DType::kF32, 4096, 1, 4096, Trans::kYes).mr, 8);
    // The dot form keeps four: B transposed for M = 1, A by rows for N = 1.
    EXPECT_EQ(config(DType::kF32, 1, 4096, 4096, Trans::kNo, Trans::kYes).mr, 4);
    EXPECT_EQ(config(DType::kF32, 4096, 1, 4096).mr, 4);
    // Threads split the rows: two threads stream 4 KiB halves of 8 KiB rows.
    const Problem two_threads{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo,
                              1, 2048, 2048, /*threads=*/2};
    EXPECT_EQ(ModelConfig(two_threads, machine).mr, 4);
    EXPECT_EQ(config(DType::kF32, 1, 2048, 2048).mr, 8);
    // A column-major problem is its row-major transpose: M = 1 there is N = 1 here.
    const Problem column{DType::kF32, Layout::kColMajor, Trans::kNo, Trans::kNo, 4096, 1, 4096, 1};
    EXPECT_EQ(ModelConfig(column, machine).mr, 8);
  }
}

// The model asks the effective last-level cache whether the matrix fits where one was measured
// (Machine::effective_llc_bytes): a guest listing a 508 MiB L3 per core that reads only 32 MiB
// at cache speed streams a 64 MiB matrix with eight rows, as a machine whose hwloc is right
// does; unmeasured, hwloc's figure stands.
TEST(DefaultConfigTest, GemvRowsAskTheEffectiveLastLevelCache) {
  const Problem big{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 1, 1024, 16384, 1};
  Machine guest = testing::SyntheticZen5Machine();
  EXPECT_EQ(ModelConfig(big, guest).mr, 4);  // 64 MiB "fits" the listed L3
  guest.effective_llc_bytes = 32ull << 20;
  EXPECT_EQ(CacheBudgetOf(guest).l3_per_core, 32ull << 20);  // private: one core's
  EXPECT_EQ(ModelConfig(big, guest).mr, 8);
  // A shared LLC is shared out as hwloc says: the Zen 3's 32 MiB between its two cores.
  Machine zen3 = testing::SyntheticZen3Machine();
  EXPECT_EQ(CacheBudgetOf(zen3).l3_per_core, 16ull << 20);
  zen3.effective_llc_bytes = 8ull << 20;
  EXPECT_EQ(CacheBudgetOf(zen3).l3_per_core, 4ull << 20);
  const Problem eight_mib{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 1, 1024, 2048,
                          1};
  EXPECT_EQ(ModelConfig(eight_mib, testing::SyntheticZen3Machine()).mr, 4);
  EXPECT_EQ(ModelConfig(eight_mib, zen3).mr, 8);
}

// The zmm pipes the machine's peaks measured (Machine::zmm_fmas_per_cycle) replace its core
// facts row's, and the model's tiles follow them: a Zen 4 measured with two pipes is modelled
// as one, and a Zen 5 measured with one loses the rules of two.
TEST(DefaultConfigTest, MeasuredZmmPipesReplaceTheFactsTable) {
  Machine zen4 = testing::SyntheticZen4Machine();
  EXPECT_EQ(model::VectorFmasPerCycle(zen4, IsaLevel::kAvx512), 1.0);
  EXPECT_EQ(model::VectorFmasPerCycle(zen4, IsaLevel::kAvx2), 2.0);
  EXPECT_FALSE(model::TwoZmmPipes(zen4));
  Machine measured = zen4;
  measured.zmm_fmas_per_cycle = 2.0;
  EXPECT_EQ(model::VectorFmasPerCycle(measured, IsaLevel::kAvx512), 2.0);
  EXPECT_TRUE(model::TwoZmmPipes(measured));
  int differ = 0;
  for (const std::int64_t size : {16, 24, 48, 64, 96, 128, 256, 512, 1024}) {
    const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size,
                          size, 1};
    differ += ModelConfig(problem, zen4).ToString() != ModelConfig(problem, measured).ToString();
  }
  EXPECT_GT(differ, 0);
  Machine zen5 = testing::SyntheticZen5Machine();
  EXPECT_TRUE(model::TwoZmmPipesAnd(zen5, &CoreFacts::tall_tile_over_one_panel));
  zen5.zmm_fmas_per_cycle = 1.0;
  EXPECT_FALSE(model::TwoZmmPipes(zen5));
  EXPECT_FALSE(model::TwoZmmPipesAnd(zen5, &CoreFacts::tall_tile_over_one_panel));
}

// The core facts the machine's calibration measured (Machine::measured_facts) replace its row's,
// and the model's picks follow them: a Zen 5 measured without the tall tile over one row panel
// splits 10x20x20 as Zen 4 does, and one measured with it keeps the row's 10x32.
TEST(DefaultConfigTest, MeasuredCoreFactsReplaceTheFactsTable) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Problem ten_rows{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 10, 20, 20, 1};
  Machine zen5 = testing::SyntheticZen5Machine();
  EXPECT_EQ(ModelConfig(ten_rows, zen5).mr, 10);
  zen5.measured_facts.tall_tile_over_one_panel = false;
  EXPECT_FALSE(model::TwoZmmPipesAnd(zen5, &CoreFacts::tall_tile_over_one_panel));
  EXPECT_TRUE(model::TwoZmmPipesAnd(zen5, &CoreFacts::l3_streams_crowded_panels));
  EXPECT_LT(ModelConfig(ten_rows, zen5).mr, 10) << ModelConfig(ten_rows, zen5).ToString();
  zen5.measured_facts.tall_tile_over_one_panel = true;
  EXPECT_EQ(ModelConfig(ten_rows, zen5).mr, 10);
  // A long direct k loop: ku1 by the row, ku4 where the machine measured that unrolling pays.
  const Problem long_k{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 64, 768, 768, 1};
  ASSERT_EQ(ModelConfig(long_k, zen5).family, KernelFamily::kDirect);
  EXPECT_EQ(ModelConfig(long_k, zen5).k_unroll, 1);
  zen5.measured_facts.unrolls_long_direct_k = true;
  EXPECT_EQ(ModelConfig(long_k, zen5).k_unroll, 4);
}

// Runs `shape` on gc's operands through `plan` (into a copy of C) and through `bound` (into
// gc's C). True where the two agree bit for bit and the bound result meets the reference with
// its canaries intact; a failure is reported under `name`.
template <typename T>
bool BoundRunsAsItsPlan(const GemmPlan<T>& plan, const BoundGemm<T>& bound,
                        const GemmArgs<T>& shape, GemmCase<T>& gc, const std::string& name) {
  std::vector<T> through_plan = gc.c.storage;
  GemmArgs<T> args = shape;
  args.a = gc.a.data();
  args.b = gc.b.data();
  args.c = through_plan.data() + gc.c.pad;
  if (const Status status = plan.Run(args); !status.ok()) {
    ADD_FAILURE() << name << ": " << status.error().message;
    return false;
  }
  if (const Status status = bound.Run(gc.a.data(), gc.b.data(), gc.c.data()); !status.ok()) {
    ADD_FAILURE() << name << " (bound): " << status.error().message;
    return false;
  }
  if (CheckResult(gc, name) > 0) return false;
  if (std::memcmp(through_plan.data(), gc.c.storage.data(), through_plan.size() * sizeof(T)) !=
      0) {
    ADD_FAILURE() << gc.name << " " << name << ": differs from GemmPlan::Run";
    return false;
  }
  return true;
}

// A plan bound to a problem gives what GemmPlan::Run gives for it, bit for bit (same kernels,
// same order), for every family, layout, transpose and scalar case, and runs again on other
// operands of the same shape; so it meets the reference and leaves the canaries alone too.
TYPED_TEST(GemmTest, BoundPlansMatchTheirPlan) {
  using T = TypeParam;
  std::mt19937_64 rng(12);
  const std::vector<T> alphas = {T(1), T(-1.5), T(0)};
  const std::vector<T> betas = {T(0), T(1), T(0.625)};
  int cases = 0;
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {16, 16, 16}, {8, 8, 8}, {1, 33, 17}, {29, 1, 13}, {13, 31, 29}, {48, 49, 50},
           {5, 17, 0}, {0, 4, 4}, {67, 129, 71}}) {
    for (KernelFamily family : {KernelFamily::kDirect, KernelFamily::kPacked, KernelFamily::kGemv}) {
      if (family == KernelFamily::kGemv && m != 1 && n != 1) continue;
      for (IsaLevel isa : RunnableLevels()) {
        const Layout layout = static_cast<Layout>(rng() % 2);
        const Trans ta = static_cast<Trans>(rng() % 2);
        const Trans tb = static_cast<Trans>(rng() % 2);
        const T alpha = alphas[rng() % alphas.size()];
        const T beta = betas[rng() % betas.size()];
        const bool nan_c = beta == T(0);
        const std::int64_t extra_ld = static_cast<std::int64_t>(rng() % 2) * 3;
        const KernelConfig config = RandomConfig<T>(family, isa, m, n, rng);
        auto plan = GemmPlan<T>::Create(config);
        ASSERT_TRUE(plan.ok()) << config.ToString();
        GemmCase<T> first = MakeCase<T>(layout, ta, tb, m, n, k, alpha, beta, extra_ld, nan_c, rng);
        const GemmArgs<T> shape{layout, ta, tb, m, n, k, alpha, nullptr, first.a.ld,
                                nullptr, first.b.ld, beta, nullptr, first.c.ld, {}};
        auto bound = plan->Bind(shape);
        ASSERT_TRUE(bound.ok()) << config.ToString() << ": " << bound.error().message;
        // Two different operand sets through the one bound plan.
        for (int call = 0; call < 2; ++call) {
          GemmCase<T> gc = call == 0 ? std::move(first)
                                     : MakeCase<T>(layout, ta, tb, m, n, k, alpha, beta,
                                                   extra_ld, nan_c, rng);
          ++cases;
          const std::string name = config.ToString() + " bound, call " + std::to_string(call);
          if (!BoundRunsAsItsPlan(*plan, *bound, shape, gc, name)) return;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// A small direct problem bound on one thread runs tile calls planned at Bind: with every
// kernel as the config's, whole and partial tiles (snug kernels, edge variants), A by rows and
// transposed, both layouts; bit for bit what GemmPlan::Run gives, and the reference with its
// canaries. Row-major problems with B not transposed and at most 8 tiles are planned; a
// transposed B (copied per call) is not.
TYPED_TEST(GemmTest, BoundSmallDirectProblemsRunTheirPlannedTiles) {
  using T = TypeParam;
  std::mt19937_64 rng(23);
  int planned = 0;
  for (IsaLevel isa : RunnableLevels()) {
    const int lanes = VectorLanes(isa, sizeof(T));
    for (const auto& kernel : MicroKernels<T>(isa)) {
      if (kernel.k_unroll != 1) continue;
      // A partial column panel only where the kernel reads one in place (masked B).
      const std::int64_t n =
          kernel.edge_reads_n_columns_of_b ? kernel.nr + (lanes > 1 ? lanes / 2 : 1) : kernel.nr;
      for (const std::int64_t m : {std::int64_t{kernel.mr}, std::int64_t{2 * kernel.mr - 1}}) {
        const std::int64_t k = 1 + static_cast<std::int64_t>(rng() % 40);
        for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
          const Trans ta = static_cast<Trans>(rng() % 2);
          const Trans tb = layout == Layout::kRowMajor ? Trans::kNo : static_cast<Trans>(rng() % 2);
          const T beta = rng() % 2 == 0 ? T(0) : T(-1.5);
          KernelConfig config = DirectConfigFor(kernel, 1, 0);
          if (m > kernel.mr) config.tile_order = TileOrder::kRowPanels;
          auto plan = GemmPlan<T>::Create(config);
          ASSERT_TRUE(plan.ok()) << config.ToString();
          GemmCase<T> gc = MakeCase<T>(layout, ta, tb, m, n, k, T(0.75), beta,
                                       static_cast<std::int64_t>(rng() % 2) * 3, beta == T(0), rng);
          const GemmArgs<T> shape{layout, ta, tb, m, n, k, T(0.75), nullptr, gc.a.ld,
                                  nullptr, gc.b.ld, beta, nullptr, gc.c.ld, {}};
          auto bound = plan->Bind(shape);
          ASSERT_TRUE(bound.ok()) << bound.error().message;
          const std::string name = config.ToString() + " " + gc.name;
          if (layout == Layout::kRowMajor) {
            const std::int64_t tiles = (m + kernel.mr - 1) / kernel.mr *
                                       ((n + kernel.nr - 1) / kernel.nr);
            EXPECT_EQ(bound->planned_tile_calls(), tiles <= 8 ? tiles : 0) << name;
          }
          planned += bound->planned_tile_calls() > 0 ? 1 : 0;
          if (!BoundRunsAsItsPlan(*plan, *bound, shape, gc, name + " bound")) return;
        }
      }
    }
  }
  EXPECT_GT(planned, 0);
}

TEST(GemmEdgeTest, BindRejectsWhatRunWouldReject) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 40, 40, 40, 1};
  auto plan = GemmPlan<float>::Create(ModelConfig(problem, *machine));
  ASSERT_TRUE(plan.ok());
  const GemmArgs<float> shape{Layout::kRowMajor, Trans::kNo, Trans::kNo, 40, 40, 40, 1.f,
                              nullptr, 40, nullptr, 40, 0.f, nullptr, 40, {}};
  EXPECT_TRUE(plan->Bind(shape).ok());

  GemmArgs<float> bad_ld = shape;
  bad_ld.ldc = 39;
  auto bound = plan->Bind(bad_ld);
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bound.error().message.find("ldc"), std::string::npos) << bound.error().message;

  GemmArgs<float> negative = shape;
  negative.k = -1;
  EXPECT_FALSE(plan->Bind(negative).ok());

  // A gemv plan bound to a matrix shape.
  const GemvKernelEntry<float>& entry = GemvKernels<float>(IsaLevel::kGeneric).front();
  KernelConfig gemv;
  gemv.family = KernelFamily::kGemv;
  gemv.isa = IsaLevel::kGeneric;
  gemv.mr = entry.mr;
  gemv.nr = entry.nr;
  auto gemv_plan = GemmPlan<float>::Create(gemv);
  ASSERT_TRUE(gemv_plan.ok()) << gemv_plan.error().message;
  EXPECT_FALSE(gemv_plan->Bind(shape).ok());
  GemmArgs<float> vector_shape = shape;
  vector_shape.m = 1;
  EXPECT_TRUE(gemv_plan->Bind(vector_shape).ok());
}

TEST(GemmEdgeTest, EmptyAndScaleOnlyProblems) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  std::mt19937_64 rng(5);
  KernelConfig config =
      ModelConfig(Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 1},
                    *machine);
  // K = 0 and alpha = 0 only scale C; M = 0 or N = 0 touch nothing.
  for (auto [m, n, k, alpha, beta] :
       std::vector<std::tuple<int, int, int, float, float>>{{4, 4, 0, 1.f, 0.f},
                                                              {4, 4, 0, 1.f, 2.f},
                                                              {4, 4, 4, 0.f, -1.f},
                                                              {0, 4, 4, 1.f, 0.f},
                                                              {4, 0, 4, 1.f, 0.f}}) {
    GemmCase<float> gc = MakeCase<float>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                         alpha, beta, 1, beta == 0.f, rng);
    GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, alpha,
                         gc.a.data(), gc.a.ld, gc.b.data(), gc.b.ld, beta, gc.c.data(),
                         gc.c.ld, {}};
    ASSERT_TRUE(Gemm(config, args).ok());
    EXPECT_EQ(CheckResult(gc, "edge"), 0);
  }
}

TEST(GemmEdgeTest, RejectsBadArgumentsAndConfigsWithoutWriting) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  std::mt19937_64 rng(6);
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 40, 40, 40, 1};
  const KernelConfig good = ModelConfig(problem, *machine);
  GemmCase<float> gc = MakeCase<float>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 40, 40, 40,
                                       1.f, 0.f, 0, false, rng);
  const std::vector<float> before = gc.c.storage;
  GemmArgs<float> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, 40, 40, 40, 1.f,
                       gc.a.data(), gc.a.ld, gc.b.data(), gc.b.ld, 0.f, gc.c.data(), gc.c.ld, {}};

  GemmArgs<float> bad_ld = args;
  bad_ld.lda = 39;
  EXPECT_FALSE(Gemm(good, bad_ld).ok());

  KernelConfig no_kernel = good;
  no_kernel.mr = 7;
  no_kernel.nr = 3;
  EXPECT_FALSE(Gemm(no_kernel, args).ok());

  KernelConfig gemv = good;
  gemv.family = KernelFamily::kGemv;
  EXPECT_FALSE(Gemm(gemv, args).ok());

  if (!IsaWithin(IsaLevel::kAvx512, HostCpuFeatures().MaxIsaLevel())) {
    KernelConfig too_wide = good;
    too_wide.isa = IsaLevel::kAvx512;
    too_wide.nr = VectorLanes(IsaLevel::kAvx512, 4);
    too_wide.mr = 8;
    too_wide.k_unroll = 1;
    too_wide.family = KernelFamily::kPacked;
    too_wide.kc = 64;
    too_wide.mc = 8;
    too_wide.nc = too_wide.nr;
    const Status status = Gemm(too_wide, args);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kUnsupported);
  }
  EXPECT_EQ(gc.c.storage, before);
}

}  // namespace
}  // namespace mmtune
