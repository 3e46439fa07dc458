// RAII ownership of one loaded hwloc topology. Only machine/ and the thread binding code include
// hwloc; everything else reads the plain `Topology`.
#pragma once

#include <hwloc.h>

#include <string>

#include "mmtune/result.h"

namespace mmtune {

class HwlocHandle {
 public:
  enum class Source { kHost, kXml, kSynthetic };

  // `text` is the XML document or synthetic description; ignored for the host.
  static Result<HwlocHandle> Load(Source source, const std::string& text = "");

  HwlocHandle(HwlocHandle&& other) noexcept : topology_(other.topology_) {
    other.topology_ = nullptr;
  }
  HwlocHandle& operator=(HwlocHandle&& other) noexcept;
  HwlocHandle(const HwlocHandle&) = delete;
  HwlocHandle& operator=(const HwlocHandle&) = delete;
  ~HwlocHandle();

  hwloc_topology_t get() const { return topology_; }

 private:
  explicit HwlocHandle(hwloc_topology_t topology) : topology_(topology) {}
  hwloc_topology_t topology_ = nullptr;
};

}  // namespace mmtune
