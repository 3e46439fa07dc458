// NEON bf16 and s8 kernels by widening (lowp_vec_neon.h: NeonLowpVec), for the neon level and,
// bf16, the neon-dot level. aarch64 builds only (see kernels/CMakeLists.txt).
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_neon.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(Bf16Gemm, simd::NeonLowpVec, NeonBf16, MMTUNE_TILES_32_REGISTERS,
                                MMTUNE_LOWP_GEMV_32_REGISTERS, MMTUNE_LOWP_NO_TILES)
MMTUNE_DEFINE_LOWP_KERNEL_TABLE(S8Gemm, simd::NeonLowpVec, NeonS8, MMTUNE_LOWP_TILES_16_REGISTERS,
                                MMTUNE_LOWP_GEMV_16_REGISTERS, MMTUNE_LOWP_NO_TILES)

}  // namespace mmtune
