// Pins threads to cores so that measurements do not migrate mid-run and each thread keeps its
// own L1/L2. Binding is best effort: where the OS refuses (containers, restricted cpusets) the
// thread runs unbound and the caller is told.
#pragma once

#include "mmtune/result.h"

namespace mmtune {

// Binds the calling thread to the hardware threads of core `core_index` (hwloc logical index).
Status BindCurrentThreadToCore(int core_index);

// The number of cores this process may run on (hwloc's view of the allowed cpuset).
int AllowedCoreCount();

}  // namespace mmtune
