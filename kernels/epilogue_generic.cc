// The epilogue functions compiled for the generic level (epilogue_impl.h; flags in
// kernels/CMakeLists.txt).
#define MMTUNE_EPILOGUE_VECTOR_BYTES 16
#include "kernels/epilogue_impl.h"

namespace mmtune {

MMTUNE_DEFINE_EPILOGUE_TABLE(Generic)

}  // namespace mmtune
