#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "machine/machine.h"

namespace mmtune {
namespace {

Topology RecordedTopology() {
  std::ifstream in(MMTUNE_TEST_DATA_DIR "/zen3_2core.xml");
  std::stringstream text;
  text << in.rdbuf();
  auto topology = LoadTopologyFromXml(text.str());
  EXPECT_TRUE(topology.ok());
  return topology.ok() ? *topology : Topology{};
}

CpuFeatures Zen3() {
  CpuFeatures cpu;
  cpu.vendor = "AuthenticAMD";
  cpu.brand = "AMD EPYC";
  cpu.family = 25;
  cpu.model = 1;
  cpu.stepping = 1;
  cpu.avx = cpu.avx2 = cpu.fma = true;
  return cpu;
}

TEST(FingerprintTest, Fnv1aTestVectors) {
  // Published FNV-1a 64-bit vectors: the hash must never change, or every DB loses its keys.
  EXPECT_EQ(FingerprintOf(""), "cbf29ce484222325");
  EXPECT_EQ(FingerprintOf("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(FingerprintOf("foobar"), "85944171f73967e8");
}

TEST(FingerprintTest, BasisNamesWhatDecidesKernelSpeed) {
  EXPECT_EQ(FingerprintBasis(Zen3(), RecordedTopology()),
            "vendor=AuthenticAMD;family=25;model=1;isa=avx2;packages=1;cores=2;"
            "L1d=32768/1;L2=524288/1;L3=33554432/2");
}

// A Neoverse-N1 (NEON with the dot product) as DecodeArmIds describes it, and the same part with
// SVE, bf16 and i8mm as well.
CpuFeatures ArmCore(bool sve_bf16_i8mm) {
  CpuFeatures cpu;
  cpu.arch = CpuArch::kArm64;
  cpu.vendor = "ARM";
  cpu.brand = "Neoverse-N1";
  cpu.family = 0x41;
  cpu.model = 0xd0c;
  cpu.asimd = cpu.asimd_dot = true;
  cpu.sve = cpu.arm_bf16 = cpu.i8mm = sve_bf16_i8mm;
  return cpu;
}

// ARM cores of one part differ in their optional extensions (a hypervisor may hide SVE): the
// basis lists them, where x86 bases (above) do not.
TEST(FingerprintTest, ArmBasesListTheExtensions) {
  const std::string basis = FingerprintBasis(ArmCore(false), RecordedTopology());
  EXPECT_EQ(basis.substr(0, basis.find(";packages=")),
            "vendor=ARM;family=65;model=3340;isa=neon-dot;features=asimd,asimddp");
  EXPECT_NE(DescribeMachine(ArmCore(false), RecordedTopology(), std::nullopt).fingerprint,
            DescribeMachine(ArmCore(true), RecordedTopology(), std::nullopt).fingerprint);
}

TEST(FingerprintTest, StableForTheSameMachine) {
  const Machine first = DescribeMachine(Zen3(), RecordedTopology(), std::nullopt);
  const Machine second = DescribeMachine(Zen3(), RecordedTopology(), std::nullopt);
  EXPECT_EQ(first.fingerprint, second.fingerprint);
  EXPECT_EQ(first.fingerprint.size(), 16u);
  EXPECT_EQ(first.fingerprint.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(FingerprintTest, IsaCapSelectsKernelsButKeepsTheFingerprint) {
  const Machine plain = DescribeMachine(Zen3(), RecordedTopology(), std::nullopt);
  const Machine capped = DescribeMachine(Zen3(), RecordedTopology(), IsaLevel::kGeneric);
  EXPECT_EQ(plain.kernel_isa, IsaLevel::kAvx2);
  EXPECT_EQ(capped.kernel_isa, IsaLevel::kGeneric);
  EXPECT_EQ(plain.fingerprint, capped.fingerprint);
}

TEST(FingerprintTest, ChangesWithWhatDecidesSpeed) {
  const Topology topology = RecordedTopology();
  const std::string base = DescribeMachine(Zen3(), topology, std::nullopt).fingerprint;

  Topology bigger_l2 = topology;
  for (CacheLevel& cache : bigger_l2.caches) {
    if (cache.level == 2) cache.size_bytes *= 2;
  }
  EXPECT_NE(DescribeMachine(Zen3(), bigger_l2, std::nullopt).fingerprint, base);

  Topology more_cores = topology;
  more_cores.cores = 4;
  EXPECT_NE(DescribeMachine(Zen3(), more_cores, std::nullopt).fingerprint, base);

  CpuFeatures other_model = Zen3();
  other_model.model = 0x11;
  EXPECT_NE(DescribeMachine(other_model, topology, std::nullopt).fingerprint, base);

  CpuFeatures avx512 = Zen3();
  avx512.avx512f = avx512.avx512bw = avx512.avx512vl = avx512.avx512dq = true;
  EXPECT_NE(DescribeMachine(avx512, topology, std::nullopt).fingerprint, base);

  // The marketing name and the stepping do not decide kernel speed.
  CpuFeatures renamed = Zen3();
  renamed.brand = "AMD EPYC 7B13";
  renamed.stepping = 2;
  EXPECT_EQ(DescribeMachine(renamed, topology, std::nullopt).fingerprint, base);
}

TEST(FingerprintTest, HostDetectionIsRepeatable) {
  auto first = DetectHostMachine();
  auto second = DetectHostMachine();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->fingerprint, second->fingerprint);
  const nlohmann::json json = *first;
  EXPECT_EQ(json.at("fingerprint"), first->fingerprint);
  EXPECT_EQ(json.at("isa").at("max_level"), ToString(first->max_isa));
  EXPECT_EQ(json.at("topology").at("cores"), first->topology.cores);
}

}  // namespace
}  // namespace mmtune
