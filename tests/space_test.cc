#include "search/space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "kernels/default_config.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"
#include "synthetic_machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

Machine Host(std::optional<IsaLevel> cap) {
  auto host = DetectHostMachine();
  EXPECT_TRUE(host.ok());
  return DescribeMachine(host->cpu, host->topology, cap);
}

TEST(SpaceTest, EveryConfigIsValidAndEveryKernelAppears) {
  const Machine machine = Host(IsaLevel::kGeneric);
  for (int threads : {1, 2}) {
    const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 300, 200, 500,
                          threads};
    const std::vector<KernelConfig> space = GenerateSpace(problem, machine);
    ASSERT_FALSE(space.empty());
    std::set<std::tuple<int, int, int>> kernels;
    std::set<KernelFamily> families;
    std::set<ParallelLoop> loops;
    for (const KernelConfig& c : space) {
      const Status status = c.Validate(problem, machine);
      ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status.error().message;
      EXPECT_EQ(c.isa, IsaLevel::kGeneric);
      EXPECT_EQ(c.threads, threads);
      kernels.insert({c.mr, c.nr, c.k_unroll});
      families.insert(c.family);
      loops.insert(c.parallel_loop);
    }
    EXPECT_EQ(kernels.size(), MicroKernels<float>(IsaLevel::kGeneric).size());
    EXPECT_EQ(families, (std::set<KernelFamily>{KernelFamily::kPacked, KernelFamily::kDirect}));
    EXPECT_EQ(loops.size(), threads == 1 ? 1u : 3u);
  }
}

// `tune --threads auto`: the problem's threads are the most a config may use, and the space
// holds every power of two below them too, for every family and dtype; without the option only
// the problem's count.
TEST(SpaceTest, SearchedThreadCountsArePowersOfTwoUpToTheProblems) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  Machine machine = testing::SyntheticZen3Machine();
  machine.topology.cores = 8;
  machine.topology.pus = 8;
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
    for (std::int64_t m : {1, 96}) {
      SCOPED_TRACE(std::string(ToString(dtype)) + " m=" + std::to_string(m));
      const Problem problem{dtype, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, 200, 300, 6};
      std::set<int> fixed;
      for (const KernelConfig& c : GenerateSpace(problem, machine)) fixed.insert(c.threads);
      EXPECT_EQ(fixed, (std::set<int>{6}));
      SpaceOptions options;
      options.search_threads = true;
      std::set<int> searched;
      std::set<KernelFamily> families_on_one;
      for (const KernelConfig& c : GenerateSpace(problem, machine, options)) {
        ASSERT_TRUE(c.Validate(problem, machine).ok()) << c.ToString();
        searched.insert(c.threads);
        if (c.threads == 1) families_on_one.insert(c.family);
      }
      EXPECT_EQ(searched, (std::set<int>{1, 2, 4, 6}));
      EXPECT_EQ(families_on_one.count(m == 1 ? KernelFamily::kGemv : KernelFamily::kPacked), 1u);
    }
  }
}

TEST(SpaceTest, VectorShapesGetTheGemvFamily) {
  const Machine machine = Host(std::nullopt);
  const Problem problem{DType::kF64, Layout::kColMajor, Trans::kYes, Trans::kNo, 1, 4096, 4096,
                        1};
  const std::vector<KernelConfig> space = GenerateSpace(problem, machine);
  ASSERT_EQ(space.size(), GemvKernels<double>(machine.kernel_isa).size());
  for (const KernelConfig& c : space) EXPECT_EQ(c.family, KernelFamily::kGemv);
}

TEST(SpaceTest, AllIsaLevelsOnRequest) {
  const Machine machine = Host(std::nullopt);
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 64, 64, 64, 1};
  SpaceOptions options;
  options.all_isa_levels = true;
  std::set<IsaLevel> levels;
  for (const KernelConfig& c : GenerateSpace(problem, machine, options)) levels.insert(c.isa);
  std::set<IsaLevel> within;
  for (IsaLevel level : kIsaLevels) {
    if (IsaWithin(level, machine.kernel_isa)) within.insert(level);
  }
  EXPECT_EQ(levels, within);
}

TEST(SpaceTest, BlocksNeverExceedTheProblem) {
  const Machine machine = Host(std::nullopt);
  const Problem problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 7, 9, 3, 1};
  for (const KernelConfig& c : GenerateSpace(problem, machine)) {
    if (c.family != KernelFamily::kPacked) continue;
    EXPECT_LE(c.mc, (7 + c.mr - 1) / c.mr * c.mr) << c.ToString();
    EXPECT_LE(c.nc, (9 + c.nr - 1) / c.nr * c.nr) << c.ToString();
  }
}

Problem RowMajorF32(std::int64_t m, std::int64_t n, std::int64_t k) {
  return Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1};
}

// The analytical default of `problem` is one of `space`'s configs (the search starts there).
void ExpectDefaultInSpace(const Problem& problem, const Machine& machine,
                          const std::vector<KernelConfig>& space) {
  const KernelConfig model = ModelConfig(problem, machine);
  EXPECT_NE(std::find(space.begin(), space.end(), model), space.end()) << model.ToString();
}

// Where the direct family's model k block is shorter than K, the space has direct configs in
// blocks around it (multiples of 64 below K), and the default is one of the space's configs.
TEST(SpaceTest, DirectBlocksAroundTheModelWhereKIsLong) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen4 = testing::SyntheticZen4Machine();
  const Problem long_k = RowMajorF32(128, 768, 3072);
  const std::vector<KernelConfig> space = GenerateSpace(long_k, zen4);
  int blocked = 0;
  for (const KernelConfig& c : space) {
    if (c.family != KernelFamily::kDirect || c.kc == 0) continue;
    ++blocked;
    EXPECT_EQ(c.kc % 64, 0) << c.ToString();
    EXPECT_LT(c.kc, 3072) << c.ToString();
  }
  EXPECT_GT(blocked, 0);
  EXPECT_GT(ModelConfig(long_k, zen4).kc, 0);
  ExpectDefaultInSpace(long_k, zen4, space);
  for (const KernelConfig& c : GenerateSpace(RowMajorF32(64, 64, 64), zen4)) {
    if (c.family == KernelFamily::kDirect) {
      EXPECT_EQ(c.kc, 0) << c.ToString();
    }
  }
}

// On an AVX-512 machine a small problem's space also has the AVX2 direct configs (the default
// may be one of them); a large problem's has AVX-512 configs only.
TEST(SpaceTest, SmallProblemsAlsoGetAvx2DirectConfigs) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen4 = testing::SyntheticZen4Machine();
  const Problem small = RowMajorF32(24, 24, 24);
  const std::vector<KernelConfig> space = GenerateSpace(small, zen4);
  const auto avx2 = std::count_if(space.begin(), space.end(), [](const KernelConfig& c) {
    return c.isa == IsaLevel::kAvx2;
  });
  const auto avx2_direct = std::count_if(space.begin(), space.end(), [](const KernelConfig& c) {
    return c.isa == IsaLevel::kAvx2 && c.family == KernelFamily::kDirect;
  });
  EXPECT_GT(avx2, 0);
  EXPECT_EQ(avx2_direct, avx2);
  EXPECT_EQ(ModelConfig(small, zen4).isa, IsaLevel::kAvx2);
  ExpectDefaultInSpace(small, zen4, space);
  for (const KernelConfig& c : GenerateSpace(RowMajorF32(512, 512, 512), zen4)) {
    EXPECT_EQ(c.isa, IsaLevel::kAvx512) << c.ToString();
  }
}

// A column-major problem's space is that of its row-major transpose: the kernels run the
// transpose, so tiles and blocks are sized for it.
TEST(SpaceTest, ColumnMajorSpaceIsTheTransposes) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen4 = testing::SyntheticZen4Machine();
  const Problem column{DType::kF32, Layout::kColMajor, Trans::kYes, Trans::kNo, 3, 500, 900, 2};
  const Problem transpose{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kYes, 500, 3, 900,
                          2};
  const std::vector<KernelConfig> space = GenerateSpace(column, zen4);
  EXPECT_EQ(space, GenerateSpace(transpose, zen4));
  // Sized for 500 rows, not 3: some packed block holds more than one tile of rows.
  EXPECT_TRUE(std::any_of(space.begin(), space.end(), [](const KernelConfig& c) {
    return c.family == KernelFamily::kPacked && c.mc > c.mr;
  }));
}

// bf16 and s8: for a matrix shape, packed configs only, kc a multiple of 16 (every k group; of
// a tile row for AMX kernels) and at most k rounded up to that, jc, ic and jr in parallel (and
// icown for the tile kernels, only for them), C's sums through a buffer only for tile kernels on
// threads splitting jc in more than one k block, the tile kernels with and without the next
// tile's C prefetched (prefetch_c; vector kernels always prefetch their own), every micro-kernel
// of each level that this CPU runs; for a vector shape (M = 1 or N = 1), every registered gemv kernel and nothing else.
// Every config valid.
template <class Kind>
void ExpectLowpSpace(std::optional<IsaLevel> cap) {
  const Machine machine = Host(cap);
  for (int threads : {1, 2}) {
    for (auto [m, n, k] :
         {std::tuple<int, int, int>{300, 200, 500}, {1, 512, 100}, {384, 1, 77}}) {
      const Problem problem{Kind::kDType, Layout::kColMajor, Trans::kYes, Trans::kNo, m, n, k,
                            threads};
      SCOPED_TRACE(problem.ToString());
      const bool vector_shape = m == 1 || n == 1;
      const std::vector<KernelConfig> space = GenerateSpace(problem, machine);
      ASSERT_FALSE(space.empty());
      std::set<std::tuple<int, int, int>> kernels;
      std::map<bool, std::set<ParallelLoop>> loops;  // by whether the kernel is a tile kernel
      std::map<bool, std::set<bool>> prefetch_c;      // the same
      std::size_t buffered = 0;
      IsaLevel level = IsaLevel::kGeneric;
      for (const KernelConfig& c : space) {
        const Status status = c.Validate(problem, machine);
        ASSERT_TRUE(status.ok()) << c.ToString() << ": " << status.error().message;
        EXPECT_EQ(c.family, vector_shape ? KernelFamily::kGemv : KernelFamily::kPacked);
        if (!vector_shape) {
          const auto* entry = FindMicroKernel<Kind>(c.isa, c.mr, c.nr, c.k_unroll);
          ASSERT_NE(entry, nullptr) << c.ToString();
          const int unit = std::max(16, entry->a_group);
          EXPECT_EQ(c.kc % unit, 0) << c.ToString();
          EXPECT_LE(c.kc, (std::max(unit, k) + unit - 1) / unit * unit) << c.ToString();
          loops[entry->tiles].insert(c.parallel_loop);
          prefetch_c[entry->tiles].insert(c.prefetch_c);
          if (c.c_buffer) {
            ++buffered;
            EXPECT_TRUE(entry->tiles && threads > 1 && c.parallel_loop == ParallelLoop::kJc &&
                        c.kc < k)
                << c.ToString();
          }
        }
        EXPECT_EQ(c.threads, threads);
        kernels.insert({c.mr, c.nr, c.k_unroll});
        level = c.isa;
      }
      if (vector_shape) {
        EXPECT_EQ(kernels.size(), GemvKernels<Kind>(level).size());
        EXPECT_EQ(space.size(), GemvKernels<Kind>(level).size());
      } else {
        std::size_t runnable = 0;
        for (const auto& entry : MicroKernels<Kind>(level)) {
          runnable += CpuRunsLowpKernel(machine.cpu, entry) ? 1 : 0;
        }
        EXPECT_EQ(kernels.size(), runnable);
        const std::set<ParallelLoop> vector_loops = {ParallelLoop::kJc, ParallelLoop::kIc,
                                                     ParallelLoop::kJr};
        std::set<ParallelLoop> tile_loops = vector_loops;
        tile_loops.insert(ParallelLoop::kIcOwnB);
        for (const auto& [tiles, kernel_loops] : loops) {
          EXPECT_EQ(kernel_loops, threads == 1 ? std::set<ParallelLoop>{ParallelLoop::kJc}
                                  : tiles      ? tile_loops
                                               : vector_loops)
              << (tiles ? "tile kernels" : "vector kernels");
        }
        EXPECT_EQ(buffered > 0, threads > 1 && loops.contains(true));
        for (const auto& [tiles, seen] : prefetch_c) {
          const std::set<bool> expected =
              tiles ? std::set<bool>{false, true} : std::set<bool>{true};
          EXPECT_EQ(seen, expected)
              << (tiles ? "tile kernels" : "vector kernels");
        }
      }
      // The level and family searched are those the analytical default runs.
      EXPECT_EQ(level, ModelConfig(problem, machine).isa);
      EXPECT_EQ(space.front().family, ModelConfig(problem, machine).family);
    }
  }
}

TEST(SpaceTest, LowPrecisionSpacesArePackedAndGroupedOrGemv) {
  for (auto cap : {std::optional<IsaLevel>{}, std::optional<IsaLevel>{IsaLevel::kGeneric}}) {
    ExpectLowpSpace<Bf16Gemm>(cap);
    ExpectLowpSpace<S8Gemm>(cap);
  }
}

// The configs of `space` reading A in place, each checked: packed, not jr, and its twin that
// packs A in the space too.
std::size_t CheckedInPlaceConfigs(const std::vector<KernelConfig>& space) {
  std::size_t in_place = 0;
  for (const KernelConfig& c : space) {
    if (!c.a_in_place) continue;
    ++in_place;
    EXPECT_EQ(c.family, KernelFamily::kPacked) << c.ToString();
    EXPECT_NE(c.parallel_loop, ParallelLoop::kJr) << c.ToString();
    KernelConfig packed = c;
    packed.a_in_place = false;
    EXPECT_NE(std::find(space.begin(), space.end(), packed), space.end()) << c.ToString();
  }
  return in_place;
}

// The bf16/s8 vector configs come packed and, where A is k-contiguous (row-major, or
// column-major transposed: these problems keep their operands), also reading A in place; never
// with jr, whose threads share the packed A.
TEST(SpaceTest, LowPrecisionReadsAInPlaceWhereAIsKContiguous) {
  const Machine machine = Host(std::nullopt);
  for (DType dtype : {DType::kBF16, DType::kS8}) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Trans ta : {Trans::kNo, Trans::kYes}) {
        const Problem problem{dtype, layout, ta, Trans::kNo, 96, 80, 64, 2};
        const std::size_t in_place = CheckedInPlaceConfigs(GenerateSpace(problem, machine));
        const bool k_contiguous = (layout == Layout::kRowMajor) == (ta == Trans::kNo);
        EXPECT_EQ(in_place > 0, k_contiguous) << problem.ToString();
      }
    }
  }
}

// f32 and f64 read A in place only on weights packed once (B's packing paid before the call),
// where the row-major view's A is k-contiguous, never with jr; the plain calls' spaces pack it.
TEST(SpaceTest, PackedWeightsReadAInPlaceWhereAIsKContiguous) {
  const Machine machine = Host(std::nullopt);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (CallForm form : {CallForm::kPlain, CallForm::kPackedB}) {
        Problem problem{dtype, Layout::kRowMajor, ta, Trans::kNo, 96, 80, 64, 2};
        problem.form = form;
        const std::size_t in_place = CheckedInPlaceConfigs(GenerateSpace(problem, machine));
        const bool expected = form == CallForm::kPackedB && ta == Trans::kNo;
        EXPECT_EQ(in_place > 0, expected) << problem.ToString();
      }
    }
  }
}

}  // namespace
}  // namespace mmtune
