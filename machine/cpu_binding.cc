#include "machine/cpu_binding.h"

#if defined(__linux__)
#include <sched.h>
#endif

#include <string>

#include "machine/hwloc_handle.h"

namespace mmtune {
namespace {

// One host topology for all binding calls; hwloc topologies are safe for concurrent reads.
const Result<HwlocHandle>& HostHandle() {
  static const Result<HwlocHandle> handle = HwlocHandle::Load(HwlocHandle::Source::kHost);
  return handle;
}

}  // namespace

Status BindCurrentThreadToCore(int core_index) {
  const auto& handle = HostHandle();
  if (!handle) return handle.error();
  hwloc_topology_t topology = handle->get();
  hwloc_obj_t core =
      hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(core_index));
  if (core == nullptr) {
    core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, static_cast<unsigned>(core_index));
  }
  if (core == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "no core with index " + std::to_string(core_index));
  }
  if (hwloc_set_cpubind(topology, core->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    return MakeError(ErrorCode::kUnsupported,
                     "the OS refused to bind a thread to core " + std::to_string(core_index));
  }
  return OkStatus();
}

int AllowedCoreCount() {
  const auto& handle = HostHandle();
  if (!handle) return 1;
  const int cores = hwloc_get_nbobjs_by_type(handle->get(), HWLOC_OBJ_CORE);
  return cores > 0 ? cores : 1;
}

int CurrentCpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

CpuAffinity CpuAffinity::OfCurrentThread() {
  CpuAffinity affinity;
#if defined(__linux__)
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mask)) affinity.cpus_.push_back(cpu);
    }
  }
#endif
  return affinity;
}

void CpuAffinity::MoveCurrentThreadOff(int cpu) const {
#if defined(__linux__)
  cpu_set_t others;
  CPU_ZERO(&others);
  for (int allowed : cpus_) {
    if (allowed != cpu) CPU_SET(allowed, &others);
  }
  if (CPU_COUNT(&others) > 0) static_cast<void>(sched_setaffinity(0, sizeof(others), &others));
#else
  static_cast<void>(cpu);
#endif
}

}  // namespace mmtune
