// NEON f32 kernels: the micro-kernel and GEMV templates instantiated over the 32-register tables,
// once for every NEON level (vec_neon.h). aarch64 builds only (see kernels/CMakeLists.txt).
#include "kernels/kernel_tables.h"
#include "kernels/microkernel_impl.h"
#include "kernels/simd/vec_neon.h"

namespace mmtune {

namespace {
using Vec = simd::NeonVec<float>;
}  // namespace

MMTUNE_DEFINE_KERNEL_TABLES(float, NeonF32, MMTUNE_TILES_32_REGISTERS, MMTUNE_GEMV_32_REGISTERS)

}  // namespace mmtune
