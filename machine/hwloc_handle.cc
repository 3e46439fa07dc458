#include "machine/hwloc_handle.h"

#include <utility>

namespace mmtune {

Result<HwlocHandle> HwlocHandle::Load(Source source, const std::string& text) {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) {
    return MakeError(ErrorCode::kInternal, "hwloc_topology_init failed");
  }
  HwlocHandle handle(topology);  // owns it from here, also on the error paths below
  int rc = 0;
  const char* what = "host";
  switch (source) {
    case Source::kHost:
      break;
    case Source::kXml:
      what = "XML";
      rc = hwloc_topology_set_xmlbuffer(topology, text.data(), static_cast<int>(text.size()));
      break;
    case Source::kSynthetic:
      what = "synthetic description";
      rc = hwloc_topology_set_synthetic(topology, text.c_str());
      break;
  }
  // hwloc drops instruction caches by default; `mmtune info` lists every cache level.
  if (rc == 0) rc = hwloc_topology_set_icache_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (rc != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("hwloc rejected the topology ") + what);
  }
  if (hwloc_topology_load(topology) != 0) {
    return MakeError(ErrorCode::kInternal,
                     std::string("hwloc could not load the ") + what + " topology");
  }
  return handle;
}

HwlocHandle& HwlocHandle::operator=(HwlocHandle&& other) noexcept {
  if (this != &other) {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
    topology_ = std::exchange(other.topology_, nullptr);
  }
  return *this;
}

HwlocHandle::~HwlocHandle() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

}  // namespace mmtune
