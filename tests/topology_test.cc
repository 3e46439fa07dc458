#include "machine/topology.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace mmtune {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Recorded with `hwloc-ls --of xml` on a 2-core AMD EPYC (Zen 3) virtual machine.
TEST(TopologyTest, ParsesRecordedXml) {
  auto topology = LoadTopologyFromXml(ReadFile(MMTUNE_TEST_DATA_DIR "/zen3_2core.xml"));
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_EQ(topology->packages, 1);
  EXPECT_EQ(topology->numa_nodes, 1);
  EXPECT_EQ(topology->cores, 2);
  EXPECT_EQ(topology->pus, 2);
  ASSERT_EQ(topology->caches.size(), 4u);

  const CacheLevel* l1d = topology->DataCache(1);
  ASSERT_NE(l1d, nullptr);
  EXPECT_EQ(l1d->Name(), "L1d");
  EXPECT_EQ(l1d->size_bytes, 32u * 1024);
  EXPECT_EQ(l1d->line_bytes, 64);
  EXPECT_EQ(l1d->associativity, 8);
  EXPECT_EQ(l1d->sharing, (std::vector<std::vector<int>>{{0}, {1}}));

  const CacheLevel& l1i = topology->caches[1];
  EXPECT_EQ(l1i.Name(), "L1i");
  EXPECT_EQ(l1i.kind, CacheKind::kInstruction);

  const CacheLevel* l2 = topology->DataCache(2);
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(l2->size_bytes, 512u * 1024);
  EXPECT_EQ(l2->CoresPerInstance(), 1);
  EXPECT_EQ(l2->Instances(), 2);

  const CacheLevel* l3 = topology->DataCache(3);
  ASSERT_NE(l3, nullptr);
  EXPECT_EQ(l3->Name(), "L3");
  EXPECT_EQ(l3->size_bytes, 32u * 1024 * 1024);
  EXPECT_EQ(l3->associativity, 16);
  EXPECT_EQ(l3->sharing, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_EQ(topology->DataCache(4), nullptr);
}

TEST(TopologyTest, ParsesMultiSocketSyntheticTopology) {
  auto topology = LoadSyntheticTopology(
      "pack:2 l3:1(size=33554432) l2:4(size=1048576) l1d:1(size=49152) core:1 pu:2");
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_EQ(topology->packages, 2);
  EXPECT_EQ(topology->cores, 8);
  EXPECT_EQ(topology->pus, 16);
  const CacheLevel* l3 = topology->DataCache(3);
  ASSERT_NE(l3, nullptr);
  EXPECT_EQ(l3->size_bytes, 33554432u);
  EXPECT_EQ(l3->sharing, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  const CacheLevel* l1d = topology->DataCache(1);
  ASSERT_NE(l1d, nullptr);
  EXPECT_EQ(l1d->size_bytes, 49152u);
  EXPECT_EQ(l1d->Instances(), 8);
  EXPECT_EQ(l1d->CoresPerInstance(), 1);
}

TEST(TopologyTest, JsonRoundTrip) {
  auto topology = LoadTopologyFromXml(ReadFile(MMTUNE_TEST_DATA_DIR "/zen3_2core.xml"));
  ASSERT_TRUE(topology.ok());
  const nlohmann::json json = *topology;
  EXPECT_EQ(json.at("caches").at(0).at("name"), "L1d");
  EXPECT_EQ(json.at("caches").at(3).at("sharing"), nlohmann::json::parse("[[0,1]]"));
  const Topology back = json.get<Topology>();
  EXPECT_EQ(back, *topology);
}

TEST(TopologyTest, RejectsGarbage) {
  auto xml = LoadTopologyFromXml("<not a topology");
  ASSERT_FALSE(xml.ok());
  EXPECT_EQ(xml.error().message.find('\n'), std::string::npos);
  EXPECT_FALSE(LoadSyntheticTopology("pack:banana").ok());
}

TEST(TopologyTest, HostTopologyIsConsistent) {
  auto topology = LoadHostTopology();
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_GE(topology->cores, 1);
  EXPECT_LE(topology->cores, topology->pus);
  EXPECT_LE(topology->pus, sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GE(topology->packages, 1);
  const CacheLevel* l1d = topology->DataCache(1);
  ASSERT_NE(l1d, nullptr) << "hwloc found no L1 data cache";
  EXPECT_GT(l1d->size_bytes, 0u);
  // No core sits under two instances of the same cache, and every index is a real core.
  for (const CacheLevel& cache : topology->caches) {
    std::vector<int> seen(static_cast<std::size_t>(topology->cores), 0);
    for (const auto& group : cache.sharing) {
      for (int core : group) {
        ASSERT_GE(core, 0);
        ASSERT_LT(core, topology->cores) << cache.Name();
        EXPECT_EQ(++seen[static_cast<std::size_t>(core)], 1) << cache.Name() << " core " << core;
      }
    }
  }
}

}  // namespace
}  // namespace mmtune
