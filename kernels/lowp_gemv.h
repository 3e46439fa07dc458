// The gemv family of the low-precision GEMMs (M = 1 or N = 1), called by LowpGemmPlan.
#pragma once

#include "kernels/kernel_config.h"
#include "kernels/lowp_gemm.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/thread_pool.h"

namespace mmtune::detail {

// Arguments already checked, M = 1 or N = 1, K > 0 and alpha != 0.
template <class Kind>
void RunLowpGemv(const KernelConfig& config, const LowpGemvKernelEntry<Kind>& kernel,
                 const LowpGemmArgs<Kind>& args, ThreadPool& pool);

}  // namespace mmtune::detail
