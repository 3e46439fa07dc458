// The epilogue functions compiled for the avx2 level (epilogue_impl.h; flags in
// kernels/CMakeLists.txt).
#define MMTUNE_EPILOGUE_VECTOR_BYTES 32
#include "kernels/epilogue_impl.h"

namespace mmtune {

MMTUNE_DEFINE_EPILOGUE_TABLE(Avx2)

}  // namespace mmtune
