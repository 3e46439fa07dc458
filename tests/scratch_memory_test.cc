// Running out of memory is an error value, never a crash: where the drivers' scratch memory
// (packed blocks, copies of B, GEMV sums; kernels/workspace.h) cannot be had, GemmPlan::Run and
// BoundGemm::Run return a kIo error naming it, every member of a thread team agrees before
// anyone writes, and C keeps every value it had. SetWorkspaceLimit makes the memory run out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"
#include "kernels/workspace.h"
#include "machine/cpu_features.h"

namespace mmtune {
namespace {

// Scratch requests past 64 bytes fail while it lives.
class ScarceMemory {
 public:
  explicit ScarceMemory(std::size_t limit = 64) { SetWorkspaceLimit(limit); }
  ~ScarceMemory() { SetWorkspaceLimit(0); }
  ScarceMemory(const ScarceMemory&) = delete;
  ScarceMemory& operator=(const ScarceMemory&) = delete;
};

template <typename X>
struct Operands {
  std::vector<typename GemmTypes<X>::A> a;
  std::vector<typename GemmTypes<X>::B> b;
  std::vector<typename GemmTypes<X>::C> c;
  GemmArgs<X> args;
};

// Row-major operands of m x n x k with random values, B transposed or not, beta = 1 (so that a
// run that went ahead would change every element of C).
template <typename X>
Operands<X> MakeOperands(std::int64_t m, std::int64_t n, std::int64_t k, Trans trans_b) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(1, 9);
  Operands<X> o;
  o.a.resize(static_cast<std::size_t>(m * k));
  o.b.resize(static_cast<std::size_t>(k * n));
  o.c.resize(static_cast<std::size_t>(m * n));
  for (auto& x : o.a) {
    if constexpr (std::is_same_v<X, Bf16Gemm>) {
      x = ToBFloat16(static_cast<float>(small(rng)));
    } else {
      x = static_cast<typename GemmTypes<X>::A>(small(rng));
    }
  }
  for (auto& x : o.b) {
    if constexpr (std::is_same_v<X, Bf16Gemm>) {
      x = ToBFloat16(static_cast<float>(small(rng)));
    } else {
      x = static_cast<typename GemmTypes<X>::B>(small(rng));
    }
  }
  for (auto& x : o.c) x = static_cast<typename GemmTypes<X>::C>(small(rng));
  o.args = {Layout::kRowMajor, Trans::kNo, trans_b, m, n, k, 1, o.a.data(), k,
            o.b.data(), trans_b == Trans::kNo ? n : k, 1, o.c.data(), n, {}};
  return o;
}

// With scarce memory `config` fails on the problem with a kIo error and leaves C as it was;
// with memory it runs.
template <typename X>
void ExpectRefusedWithCUnchanged(const KernelConfig& config, std::int64_t m, std::int64_t n,
                                 std::int64_t k, Trans trans_b, std::size_t limit = 64) {
  SCOPED_TRACE(config.ToString());
  auto plan = GemmPlan<X>::Create(config);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  Operands<X> o = MakeOperands<X>(m, n, k, trans_b);
  const auto before = o.c;
  {
    const ScarceMemory scarce(limit);
    const Status status = plan->Run(o.args);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::kIo);
    EXPECT_NE(status.error().message.find("not enough memory"), std::string::npos)
        << status.error().message;
    EXPECT_TRUE(o.c == before) << "C changed although the run failed";

    auto bound = plan->Bind(o.args);
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    EXPECT_FALSE(bound->Run(o.a.data(), o.b.data(), o.c.data()).ok());
    EXPECT_TRUE(o.c == before) << "C changed although the bound run failed";
  }
  const Status status = plan->Run(o.args);
  EXPECT_TRUE(status.ok()) << status.error().message;
  EXPECT_FALSE(o.c == before);
}

IsaLevel HostLevel() { return HostCpuFeatures().MaxIsaLevel(); }

// A config of `family` for a registered kernel (micro-kernel or gemv entry), jc in parallel;
// packed blocks small enough that every loop runs several times.
template <class Entry>
KernelConfig ConfigOf(KernelFamily family, const Entry& kernel, int threads,
                      ParallelLoop loop = ParallelLoop::kJc) {
  KernelConfig c;
  c.family = family;
  c.isa = kernel.isa;
  c.mr = kernel.mr;
  c.nr = kernel.nr;
  if constexpr (requires { kernel.k_unroll; }) c.k_unroll = kernel.k_unroll;
  c.threads = threads;
  c.parallel_loop = loop;
  if (family == KernelFamily::kPacked) {
    c.mc = 2 * kernel.mr;
    c.nc = 2 * kernel.nr;
    c.kc = 64;
  }
  return c;
}

TEST(ScratchMemoryTest, PackedRunsOfEverySplitFailCleanly) {
  const auto& kernel = MicroKernels<float>(HostLevel()).front();
  ExpectRefusedWithCUnchanged<float>(ConfigOf(KernelFamily::kPacked, kernel, 1), 70, 90,
                                     130, Trans::kNo);
  for (ParallelLoop loop :
       {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr, ParallelLoop::kIcOwnB}) {
    ExpectRefusedWithCUnchanged<float>(ConfigOf(KernelFamily::kPacked, kernel, 2, loop), 70, 90, 130,
                                       Trans::kNo);
  }
  // The low-precision packed runs take the same driver.
  IsaLevel level = HostLevel();
  if (!CpuRunsLowp<Bf16Gemm>(HostCpuFeatures(), level)) level = IsaLevel::kAvx2;
  ExpectRefusedWithCUnchanged<Bf16Gemm>(
      ConfigOf(KernelFamily::kPacked, MicroKernels<Bf16Gemm>(level).front(), 2), 70, 90, 130,
      Trans::kNo);
}

// The AMX kernels' buffer of C sums (cbuf), with memory enough for the packed blocks only: the
// run fails before any thread writes C.
TEST(ScratchMemoryTest, TileRunsWithoutTheirBufferOfSumsFailCleanly) {
  if (!CpuRunsLowpTiles<Bf16Gemm>(HostCpuFeatures())) GTEST_SKIP() << "no AMX_BF16 here";
  for (const auto& kernel : MicroKernels<Bf16Gemm>(IsaLevel::kAvx512)) {
    if (!kernel.tiles) continue;
    for (int threads : {1, 2}) {
      KernelConfig c = ConfigOf(KernelFamily::kPacked, kernel, threads);
      c.c_buffer = true;
      const std::int64_t m = 100;
      const auto blocks = static_cast<std::size_t>(std::max(c.mc, c.nc) * c.kc) * 2;  // bf16
      const auto sums = static_cast<std::size_t>((m + c.mr - 1) / c.mr * c.mr * c.nc) * 4;
      ASSERT_GT(sums, blocks) << c.ToString();
      ExpectRefusedWithCUnchanged<Bf16Gemm>(c, m, 90, 130, Trans::kNo, blocks);
    }
  }
}

TEST(ScratchMemoryTest, DirectRunsCopyingBFailCleanly) {
  const auto& kernel = MicroKernels<float>(HostLevel()).front();
  for (int threads : {1, 2}) {
    // A transposed B is copied to row-major before any tile runs.
    ExpectRefusedWithCUnchanged<float>(ConfigOf(KernelFamily::kDirect, kernel, threads), 40, 50,
                                       60, Trans::kYes);
  }
}

TEST(ScratchMemoryTest, GemvRunsFailCleanly) {
  const auto& kernel = GemvKernels<float>(HostLevel()).front();
  for (int threads : {1, 2}) {
    // M = 1 with B not transposed: the axpy form, whose sums are scratch.
    ExpectRefusedWithCUnchanged<float>(ConfigOf(KernelFamily::kGemv, kernel, threads), 1, 300, 50,
                                       Trans::kNo);
  }
}

}  // namespace
}  // namespace mmtune
