#include "machine/cpu_binding.h"

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

}  // namespace mmtune
