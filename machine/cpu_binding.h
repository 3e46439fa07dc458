// Pins threads to cores so that measurements do not migrate mid-run and each thread keeps its
// own L1/L2, and moves threads off a CPU another thread needs. Binding is best effort: where the
// OS refuses (containers, restricted cpusets) the thread runs unbound and the caller is told.
#pragma once

#include <vector>

#include "mmtune/result.h"

namespace mmtune {

// Binds the calling thread to the hardware threads of core `core_index` (hwloc logical index).
Status BindCurrentThreadToCore(int core_index);

// The number of cores this process may run on (hwloc's view of the allowed cpuset).
int AllowedCoreCount();

// The CPU (the OS's index of the hardware thread) the calling thread runs on, -1 where the OS
// cannot say. Cheap enough for every GEMM call (a vDSO call on Linux).
int CurrentCpu();

// The CPUs a thread may run on (its affinity mask), captured once.
class CpuAffinity {
 public:
  // The calling thread's; empty where the OS cannot say.
  static CpuAffinity OfCurrentThread();

  // Restricts the calling thread to these CPUs but `cpu`, which moves it off `cpu` at once.
  // Best effort: nothing happens where no other CPU remains or the OS refuses.
  void MoveCurrentThreadOff(int cpu) const;

 private:
  std::vector<int> cpus_;
};

}  // namespace mmtune
