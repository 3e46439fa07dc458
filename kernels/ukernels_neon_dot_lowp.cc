// NEON s8 kernels with SDOT, for the neon-dot and neon-bf16 levels on cores without I8MM
// (lowp_vec_neon.h: SdotLowpVec). aarch64 builds only, compiled with the dot product
// (see kernels/CMakeLists.txt).
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_neon.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(S8Gemm, simd::SdotLowpVec, SdotS8, MMTUNE_TILES_32_REGISTERS,
                                MMTUNE_LOWP_GEMV_32_REGISTERS, MMTUNE_LOWP_NO_TILES)

}  // namespace mmtune
