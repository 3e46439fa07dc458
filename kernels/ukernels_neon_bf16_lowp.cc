// NEON bf16 kernels with BFDOT and, in paired tiles, BFMMLA, for the neon-bf16 level
// (lowp_vec_neon.h: BfdotLowpVec, BfmmlaLowpVec). aarch64 builds only, compiled with BF16
// (see kernels/CMakeLists.txt).
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_neon.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(Bf16Gemm, simd::BfdotLowpVec, BfdotBf16, MMTUNE_TILES_32_REGISTERS,
                                MMTUNE_LOWP_GEMV_32_REGISTERS, MMTUNE_LOWP_NO_TILES)
MMTUNE_DEFINE_LOWP_PAIRED_TABLE(Bf16Gemm, simd::BfmmlaLowpVec, BfmmlaBf16)

}  // namespace mmtune
