// Avx2 f32 kernels: the micro-kernel and GEMV templates instantiated over the 16-register
// tables. Compiled with this ISA's flags only (see kernels/CMakeLists.txt).
#include "kernels/kernel_tables.h"
#include "kernels/microkernel_impl.h"
#include "kernels/simd/vec_avx2.h"

namespace mmtune {

namespace {
using Vec = simd::Avx2Vec<float>;
}  // namespace

MMTUNE_DEFINE_KERNEL_TABLES(float, Avx2F32, MMTUNE_TILES_16_REGISTERS,
                            MMTUNE_GEMV_16_REGISTERS)

}  // namespace mmtune
