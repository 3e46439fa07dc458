// Avx512 f64 kernels: the micro-kernel and GEMV templates instantiated over the 32-register
// tables. Compiled with this ISA's flags only (see kernels/CMakeLists.txt).
#include "kernels/kernel_tables.h"
#include "kernels/microkernel_impl.h"
#include "kernels/simd/vec_avx512.h"

namespace mmtune {

namespace {
using Vec = simd::Avx512Vec<double>;
}  // namespace

MMTUNE_DEFINE_KERNEL_TABLES(double, Avx512F64, MMTUNE_TILES_32_REGISTERS,
                            MMTUNE_GEMV_32_REGISTERS)

}  // namespace mmtune
