#include "machine/topology.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "machine/hwloc_handle.h"

namespace mmtune {

const char* ToString(CacheKind kind) {
  switch (kind) {
    case CacheKind::kData: return "data";
    case CacheKind::kInstruction: return "instruction";
    case CacheKind::kUnified: return "unified";
  }
  return "?";
}

std::string CacheLevel::Name() const {
  std::string name = "L" + std::to_string(level);
  if (kind == CacheKind::kData) name += 'd';
  if (kind == CacheKind::kInstruction) name += 'i';
  return name;
}

const CacheLevel* Topology::DataCache(int wanted_level) const {
  for (const CacheLevel& cache : caches) {
    if (cache.level == wanted_level && cache.kind != CacheKind::kInstruction) return &cache;
  }
  return nullptr;
}

namespace {

CacheKind KindOf(hwloc_obj_cache_type_e type) {
  switch (type) {
    case HWLOC_OBJ_CACHE_DATA: return CacheKind::kData;
    case HWLOC_OBJ_CACHE_INSTRUCTION: return CacheKind::kInstruction;
    case HWLOC_OBJ_CACHE_UNIFIED: return CacheKind::kUnified;
  }
  return CacheKind::kUnified;
}

// Logical indices of the cores whose hardware threads all lie inside `cpuset`.
std::vector<int> CoresInside(hwloc_topology_t topology, hwloc_const_cpuset_t cpuset) {
  std::vector<int> cores;
  const int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  for (int i = 0; i < count; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    if (core->cpuset != nullptr && hwloc_bitmap_isincluded(core->cpuset, cpuset)) {
      cores.push_back(static_cast<int>(core->logical_index));
    }
  }
  return cores;
}

Topology Describe(hwloc_topology_t topology) {
  Topology t;
  t.packages = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE));
  t.numa_nodes = std::max(1, hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE));
  t.cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  t.pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  if (t.cores <= 0) t.cores = t.pus;  // some virtual machines expose PUs only

  // Instances with the same geometry at the same level form one `CacheLevel`.
  using Key = std::tuple<int, int, std::uint64_t, int, int>;
  std::map<Key, CacheLevel> groups;
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L1ICACHE,
                                HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE}) {
    const int count = hwloc_get_nbobjs_by_type(topology, type);
    for (int i = 0; i < count; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topology, type, static_cast<unsigned>(i));
      const auto& attr = obj->attr->cache;
      const CacheKind kind = KindOf(attr.type);
      const Key key{static_cast<int>(attr.depth), static_cast<int>(kind), attr.size,
                    static_cast<int>(attr.linesize), attr.associativity};
      CacheLevel& group = groups[key];
      group.level = static_cast<int>(attr.depth);
      group.kind = kind;
      group.size_bytes = attr.size;
      group.line_bytes = static_cast<int>(attr.linesize);
      group.associativity = attr.associativity;
      group.sharing.push_back(CoresInside(topology, obj->cpuset));
    }
  }
  // The map orders by (level, kind, ...) and `kData` sorts before `kInstruction`.
  for (auto& [key, group] : groups) {
    std::sort(group.sharing.begin(), group.sharing.end());
    t.caches.push_back(std::move(group));
  }
  return t;
}

Result<Topology> LoadFrom(HwlocHandle::Source source, const std::string& text) {
  auto handle = HwlocHandle::Load(source, text);
  if (!handle) return handle.error();
  return Describe(handle->get());
}

}  // namespace

Result<Topology> LoadHostTopology() { return LoadFrom(HwlocHandle::Source::kHost, ""); }

Result<Topology> LoadTopologyFromXml(const std::string& xml) {
  return LoadFrom(HwlocHandle::Source::kXml, xml);
}

Result<Topology> LoadSyntheticTopology(const std::string& description) {
  return LoadFrom(HwlocHandle::Source::kSynthetic, description);
}

NLOHMANN_JSON_SERIALIZE_ENUM(CacheKind, {{CacheKind::kData, "data"},
                                         {CacheKind::kInstruction, "instruction"},
                                         {CacheKind::kUnified, "unified"}})

void to_json(nlohmann::json& json, const Topology& t) {
  nlohmann::json caches = nlohmann::json::array();
  for (const CacheLevel& c : t.caches) {
    caches.push_back({{"name", c.Name()},
                      {"level", c.level},
                      {"kind", c.kind},
                      {"size_bytes", c.size_bytes},
                      {"line_bytes", c.line_bytes},
                      {"associativity", c.associativity},
                      {"instances", c.Instances()},
                      {"sharing", c.sharing}});
  }
  json = {{"packages", t.packages}, {"numa_nodes", t.numa_nodes}, {"cores", t.cores},
          {"pus", t.pus},           {"caches", caches}};
}

void from_json(const nlohmann::json& json, Topology& t) {
  json.at("packages").get_to(t.packages);
  json.at("numa_nodes").get_to(t.numa_nodes);
  json.at("cores").get_to(t.cores);
  json.at("pus").get_to(t.pus);
  t.caches.clear();
  for (const auto& entry : json.at("caches")) {
    CacheLevel c;
    entry.at("level").get_to(c.level);
    entry.at("kind").get_to(c.kind);
    entry.at("size_bytes").get_to(c.size_bytes);
    entry.at("line_bytes").get_to(c.line_bytes);
    entry.at("associativity").get_to(c.associativity);
    entry.at("sharing").get_to(c.sharing);
    t.caches.push_back(std::move(c));
  }
}

}  // namespace mmtune
