// AArch64 CPUs from their HWCAP / HWCAP2 bits and MIDR, decoded on any machine (their
// fingerprints: fingerprint_test.cc).
#include "machine/arm_features.h"

#include <gtest/gtest.h>

namespace mmtune {
namespace {

// Neoverse-N1 r4p1 (an AWS Graviton2 core): NEON with the dot product, no SVE, bf16 or i8mm.
ArmIdSnapshot NeoverseN1() {
  ArmIdSnapshot s;
  s.midr = 0x414fd0c1;
  s.hwcap = (1ull << 1) | (1ull << 11) | (1ull << 20);  // asimd, cpuid, asimddp
  return s;
}

// Neoverse-V1 r1p1 (Graviton3): also SVE, bf16 and i8mm.
ArmIdSnapshot NeoverseV1() {
  ArmIdSnapshot s;
  s.midr = 0x411fd401;
  s.hwcap = (1ull << 1) | (1ull << 11) | (1ull << 20) | (1ull << 22);  // ... and sve
  s.hwcap2 = (1ull << 13) | (1ull << 14);                              // i8mm, bf16
  return s;
}

TEST(DecodeArmIdsTest, NamesTheImplementerAndPartAndReadsTheExtensions) {
  const CpuFeatures n1 = DecodeArmIds(NeoverseN1());
  EXPECT_EQ(n1.arch, CpuArch::kArm64);
  EXPECT_EQ(n1.vendor, "ARM");
  EXPECT_EQ(n1.brand, "Neoverse-N1");
  EXPECT_EQ(n1.family, 0x41);
  EXPECT_EQ(n1.model, 0xd0c);
  EXPECT_EQ(n1.stepping, 4 * 16 + 1);
  EXPECT_TRUE(n1.asimd);
  EXPECT_TRUE(n1.asimd_dot);
  EXPECT_FALSE(n1.sve);
  EXPECT_FALSE(n1.arm_bf16);
  EXPECT_FALSE(n1.i8mm);
  EXPECT_FALSE(n1.avx2);

  const CpuFeatures v1 = DecodeArmIds(NeoverseV1());
  EXPECT_EQ(v1.brand, "Neoverse-V1");
  EXPECT_TRUE(v1.sve);
  EXPECT_TRUE(v1.arm_bf16);
  EXPECT_TRUE(v1.i8mm);
  EXPECT_FALSE(v1.sve2);
  EXPECT_FALSE(v1.sme);
}

TEST(DecodeArmIdsTest, ListsTheArmExtensionsOnly) {
  const CpuFeatures v1 = DecodeArmIds(NeoverseV1());
  std::string present;
  for (const auto& [name, has] : v1.FeatureList()) {
    EXPECT_EQ(name.find("avx"), std::string::npos) << name;
    if (has) present += name + " ";
  }
  EXPECT_EQ(present, "asimd asimddp bf16 i8mm sve ");
}

TEST(DecodeArmIdsTest, TheKernelLevelFollowsTheDotProductAndBf16) {
  EXPECT_EQ(DecodeArmIds(NeoverseN1()).MaxIsaLevel(), IsaLevel::kNeonDot);
  EXPECT_EQ(DecodeArmIds(NeoverseV1()).MaxIsaLevel(), IsaLevel::kNeonBf16);
  ArmIdSnapshot a57;  // Cortex-A57: NEON alone
  a57.midr = 0x411fd070;
  a57.hwcap = (1ull << 1) | (1ull << 11);
  EXPECT_EQ(DecodeArmIds(a57).MaxIsaLevel(), IsaLevel::kNeon);
  ArmIdSnapshot none;  // no Advanced SIMD reported: generic kernels only
  none.midr = a57.midr;
  EXPECT_EQ(DecodeArmIds(none).MaxIsaLevel(), IsaLevel::kGeneric);
}

TEST(DecodeArmIdsTest, AnUnknownImplementerOrPartIsNamedByItsCodes) {
  ArmIdSnapshot s;
  s.midr = 0x990f1230;
  const CpuFeatures cpu = DecodeArmIds(s);
  EXPECT_EQ(cpu.vendor, "arm-implementer-0x99");
  EXPECT_EQ(cpu.brand, "part 0x123");
  EXPECT_FALSE(cpu.asimd);
}

#if defined(__aarch64__) && defined(__linux__)
// On an ARM machine (or under qemu-user), the host's own values: NEON is in every AArch64 Linux
// CPU, and mmtune reads the features the kernel reports.
TEST(HostArmFeaturesTest, ReportsNeon) {
  const CpuFeatures& host = HostCpuFeatures();
  EXPECT_EQ(host.arch, CpuArch::kArm64);
  EXPECT_TRUE(host.asimd);
  EXPECT_TRUE(IsaWithin(IsaLevel::kNeon, host.MaxIsaLevel()));
}
#endif

}  // namespace
}  // namespace mmtune
