// AVX-VNNI s8 kernels: the low-precision micro-kernel and GEMV templates over VEX VPDPBUSD.
// A group's A broadcast and B vector are one register each, as for f32, so the f32 16-register
// tile list fits. Compiled with AVX2 + AVX-VNNI flags only (see kernels/CMakeLists.txt); the
// registry serves this table at the AVX2 level in place of Avx2S8's where the CPU has AVX_VNNI.
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_avx_vnni.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(S8Gemm, simd::AvxVnniLowpVec, AvxVnniS8, MMTUNE_TILES_16_REGISTERS,
                                MMTUNE_LOWP_GEMV_16_REGISTERS, MMTUNE_LOWP_NO_TILES)

}  // namespace mmtune
