// Avx512 bf16 and s8 kernels: the low-precision micro-kernel and GEMV templates instantiated over this ISA's
// registry table, and the AMX tile kernels after them. Compiled with this ISA's flags only (see
// kernels/CMakeLists.txt).
// GCC 12 reports the _mm512_undefined_* source operand inside its own intrinsics (conversions,
// shifts, extracts) as "may be used uninitialized" once they are inlined here (at -O1 with the
// sanitizers, as "is used uninitialized"); it is the intrinsics' deliberate don't-care operand.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/amx_microkernel_impl.h"
#include "kernels/lowp_gemv_impl.h"
#include "kernels/lowp_kernel_tables.h"
#include "kernels/lowp_microkernel_impl.h"
#include "kernels/simd/lowp_vec_avx512.h"

namespace mmtune {

MMTUNE_DEFINE_LOWP_KERNEL_TABLE(Bf16Gemm, simd::Avx512LowpVec, Avx512Bf16, MMTUNE_TILES_32_REGISTERS,
                                MMTUNE_LOWP_GEMV_32_REGISTERS, MMTUNE_LOWP_AMX_TILES)
MMTUNE_DEFINE_LOWP_KERNEL_TABLE(S8Gemm, simd::Avx512LowpVec, Avx512S8, MMTUNE_TILES_32_REGISTERS,
                                MMTUNE_LOWP_GEMV_32_REGISTERS, MMTUNE_LOWP_AMX_TILES)

}  // namespace mmtune
