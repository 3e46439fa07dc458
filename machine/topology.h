// The parts of the hardware topology that decide blocking and threading: how many packages,
// NUMA nodes, cores and hardware threads there are, and every cache level with its geometry and
// which cores share each instance. Read from hwloc, kept as plain data (JSON round trip) so the
// tuner, the search and the DB never touch hwloc themselves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "mmtune/result.h"

namespace mmtune {

enum class CacheKind : std::uint8_t { kData, kInstruction, kUnified };
const char* ToString(CacheKind kind);

// One group of identical cache instances at one level (a hybrid CPU may have two L2 groups).
struct CacheLevel {
  int level = 0;                 // 1 = closest to the core
  CacheKind kind = CacheKind::kUnified;
  std::uint64_t size_bytes = 0;  // of one instance
  int line_bytes = 0;            // 0 = unknown
  int associativity = 0;         // ways; 0 = unknown, -1 = fully associative
  // For each instance, the logical indices of the cores that share it: {{0}, {1}} for private
  // caches of a two-core machine, {{0, 1}} for one shared L3.
  std::vector<std::vector<int>> sharing;

  int Instances() const { return static_cast<int>(sharing.size()); }
  int CoresPerInstance() const { return sharing.empty() ? 0 : static_cast<int>(sharing[0].size()); }
  std::string Name() const;  // "L1d", "L1i", "L2", "L3"
  friend bool operator==(const CacheLevel&, const CacheLevel&) = default;
};

struct Topology {
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;                      // hardware threads
  std::vector<CacheLevel> caches;   // by level, data before instruction at the same level

  // The data (or unified) cache at `level`, or nullptr when the machine has none.
  const CacheLevel* DataCache(int level) const;
  friend bool operator==(const Topology&, const Topology&) = default;
};

Result<Topology> LoadHostTopology();
// hwloc's XML export format (`hwloc-ls --of xml`), e.g. recorded from another machine.
Result<Topology> LoadTopologyFromXml(const std::string& xml);
// hwloc's synthetic description, e.g. "pack:2 l3:1(size=33554432) l2:4 l1d:1 core:1 pu:2".
Result<Topology> LoadSyntheticTopology(const std::string& description);

void to_json(nlohmann::json& json, const Topology& topology);
void from_json(const nlohmann::json& json, Topology& topology);

}  // namespace mmtune
