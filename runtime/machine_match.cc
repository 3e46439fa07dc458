#include "runtime/machine_match.h"

#include <cstdint>
#include <map>

namespace mmtune {
namespace {

// Size of one instance of the data (or unified) cache per level.
std::map<int, std::uint64_t> DataCacheSizes(const Topology& topology) {
  std::map<int, std::uint64_t> sizes;
  for (int level = 1; level <= 4; ++level) {
    if (const CacheLevel* cache = topology.DataCache(level)) sizes[level] = cache->size_bytes;
  }
  return sizes;
}

}  // namespace

bool IsCompatibleMachine(const nlohmann::json& description, const Machine& host) {
  // Stored descriptions come from a file that may be hostile: read them without exceptions
  // escaping, and treat anything unexpected as "not compatible".
  try {
    const nlohmann::json& isa = description.at("isa").at("max_level");
    if (!isa.is_string() || isa.get<std::string>() != ToString(host.max_isa)) return false;
    Topology topology;
    from_json(description.at("topology"), topology);
    return !topology.caches.empty() &&
           DataCacheSizes(topology) == DataCacheSizes(host.topology);
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace mmtune
