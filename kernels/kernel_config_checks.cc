// The checks of a KernelConfig that ask the kernel registry (the kernel exists, its k runs, tile
// kernels and the CPU's extensions), apart from kernel_config.cc so that what only stores and
// reads configs (db/) links no micro-kernel.
#include <algorithm>
#include <string>

#include "kernels/kernel_config.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/microkernel.h"

namespace mmtune {
namespace {

Status Invalid(const std::string& message) {
  return MakeError(ErrorCode::kInvalidArgument, message);
}

bool KernelExists(DType dtype, IsaLevel isa, int mr, int nr, int k_unroll) {
  return WithGemmOf(dtype, [&]<typename X>() {
    return FindMicroKernel<X>(isa, mr, nr, k_unroll) != nullptr;
  });
}

bool GemvExists(DType dtype, IsaLevel isa, int mr, int nr) {
  return WithGemmOf(dtype, [&]<typename X>() { return FindGemvKernel<X>(isa, mr, nr) != nullptr; });
}

// k values per run of the config kernel's packed A rows: kc must hold whole runs.
int AGroupOf(DType dtype, const KernelConfig& c) {
  return WithGemmOf(dtype, [&]<typename X>() {
    return PackedAGroup<X>(c.isa, c.mr, c.nr, c.k_unroll);
  });
}

// Whether the config's kernel is an AMX tile kernel.
bool IsTileKernel(DType dtype, const KernelConfig& c) {
  return WithGemmOf(dtype, [&]<typename X>() {
    if constexpr (GemmTypes<X>::kLowPrecision) {
      const auto* kernel = FindMicroKernel<X>(c.isa, c.mr, c.nr, c.k_unroll);
      return kernel != nullptr && kernel->tiles;
    } else {
      return false;
    }
  });
}

}  // namespace

bool KernelConfig::PadsPartialRows(DType dtype) const {
  switch (family) {
    case KernelFamily::kDirect: return IsLowPrecision(dtype);
    case KernelFamily::kPacked: return IsTileKernel(dtype, *this);
    case KernelFamily::kGemv: return false;
  }
  return false;
}

namespace {

// Whether the config's kernel is an AMX tile kernel that this CPU cannot run.
bool LacksTiles(DType dtype, const KernelConfig& c, const CpuFeatures& cpu) {
  return c.family != KernelFamily::kGemv && IsTileKernel(dtype, c) &&
         WithGemmOf(dtype, [&]<typename X>() {
           if constexpr (GemmTypes<X>::kLowPrecision) {
             return !CpuRunsLowpTiles<X>(cpu);
           } else {
             return false;
           }
         });
}

}  // namespace

Status KernelConfig::Validate(const Problem& problem, const Machine& machine) const {
  if (!IsaWithin(isa, machine.kernel_isa)) {
    return Invalid(std::string("isa ") + mmtune::ToString(isa) + " does not run at this machine's "
                   "kernel level " + mmtune::ToString(machine.kernel_isa));
  }
  if ((problem.dtype == DType::kBF16 && !CpuRunsLowp<Bf16Gemm>(machine.cpu, isa)) ||
      (problem.dtype == DType::kS8 && !CpuRunsLowp<S8Gemm>(machine.cpu, isa))) {
    return Invalid(std::string(mmtune::ToString(isa)) + " " + mmtune::ToString(problem.dtype) +
                   " kernels need " +
                   (problem.dtype == DType::kBF16 ? "AVX512_BF16" : "AVX512_VNNI") +
                   ", which this CPU lacks");
  }
  if (LacksTiles(problem.dtype, *this, machine.cpu)) {
    return Invalid(std::string("the ") + mmtune::ToString(problem.dtype) + " tile kernel " +
                   std::to_string(mr) + "x" + std::to_string(nr) + " needs " +
                   (problem.dtype == DType::kBF16 ? "AMX_BF16" : "AMX_INT8") +
                   " (and the OS's leave to use it), which this machine lacks");
  }
  const int max_threads = std::max({1, machine.topology.cores, machine.topology.pus});
  if (threads > max_threads) {
    return Invalid("threads = " + std::to_string(threads) + " exceeds this machine's " +
                   std::to_string(max_threads) + " cores");
  }
  if (auto status = problem.Validate(); !status) return status;
  if (auto status = ValidateFor(problem.dtype); !status) return status;
  return ValidateShape(problem.m, problem.n);
}

// The kernel first: a tile no table has explains the rest (mc not a multiple of its mr...).
Status KernelConfig::ValidateFor(DType dtype) const {
  if (!BuildHasKernels(isa)) {  // a well-formed config this build cannot run (another DB's)
    return MakeError(ErrorCode::kUnsupported, std::string("this build has no ") +
                                                  mmtune::ToString(isa) + " kernels");
  }
  const std::string tile = std::to_string(mr) + "x" + std::to_string(nr);
  if (family == KernelFamily::kGemv) {
    if (!GemvExists(dtype, isa, mr, nr)) {
      return Invalid("no " + std::string(mmtune::ToString(isa)) + " " + mmtune::ToString(dtype) +
                     " gemv kernel " + tile);
    }
    return ValidateFields(dtype);
  }
  if (!KernelExists(dtype, isa, mr, nr, k_unroll)) {
    return Invalid("no " + std::string(mmtune::ToString(isa)) + " " + mmtune::ToString(dtype) +
                   " micro-kernel " + tile + " with k_unroll " + std::to_string(k_unroll));
  }
  if (auto status = ValidateFields(dtype); !status) return status;
  if (family != KernelFamily::kPacked) return OkStatus();
  if (const int run = AGroupOf(dtype, *this); IsTileKernel(dtype, *this) && kc % run != 0) {
    return Invalid("kc = " + std::to_string(kc) + " must be a multiple of " + std::to_string(run) +
                   " (the k of one tile row of the " + tile + " tile kernel)");
  }
  if (c_buffer && !IsTileKernel(dtype, *this)) {
    return Invalid("a buffer of C sums (cbuf) applies to the tile kernels only, not " + tile);
  }
  return OkStatus();
}

}  // namespace mmtune
