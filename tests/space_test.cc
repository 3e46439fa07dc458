#include "search/space.h"

#include <gtest/gtest.h>

#include <set>

#include "kernels/microkernel.h"

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
  EXPECT_EQ(levels.size(), static_cast<std::size_t>(machine.kernel_isa) + 1);
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

}  // namespace
}  // namespace mmtune
