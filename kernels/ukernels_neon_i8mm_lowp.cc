// NEON s8 kernels with USDOT and, in paired tiles, USMMLA, for the neon-dot and neon-bf16 levels
// on cores with I8MM (lowp_vec_neon.h: UsdotLowpVec, UsmmlaLowpVec). aarch64 builds only,
// compiled with I8MM (see kernels/CMakeLists.txt).
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_neon.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(S8Gemm, simd::UsdotLowpVec, UsdotS8, MMTUNE_TILES_32_REGISTERS,
                                MMTUNE_LOWP_GEMV_32_REGISTERS, MMTUNE_LOWP_NO_TILES)
MMTUNE_DEFINE_LOWP_PAIRED_TABLE(S8Gemm, simd::UsmmlaLowpVec, UsmmlaS8)

}  // namespace mmtune
