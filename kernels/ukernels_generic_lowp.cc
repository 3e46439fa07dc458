// Generic bf16 and s8 kernels: the low-precision micro-kernel and GEMV templates instantiated over this ISA's
// registry table. Compiled with this ISA's flags only (see kernels/CMakeLists.txt).
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_generic.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(Bf16Gemm, simd::GenericLowpVec, GenericBf16, MMTUNE_LOWP_TILES_16_REGISTERS,
                                MMTUNE_LOWP_GEMV_16_REGISTERS,
                                MMTUNE_LOWP_NO_TILES)
MMTUNE_DEFINE_LOWP_KERNEL_TABLE(S8Gemm, simd::GenericLowpVec, GenericS8, MMTUNE_LOWP_TILES_16_REGISTERS,
                                MMTUNE_LOWP_GEMV_16_REGISTERS,
                                MMTUNE_LOWP_NO_TILES)

}  // namespace mmtune
