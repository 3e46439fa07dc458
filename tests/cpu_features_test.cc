#include "machine/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "machine/core_facts.h"

namespace mmtune {
namespace {

void SetVendor(CpuidSnapshot& s, const char* vendor) {
  std::memcpy(&s.leaf0[1], vendor + 0, 4);
  std::memcpy(&s.leaf0[3], vendor + 4, 4);
  std::memcpy(&s.leaf0[2], vendor + 8, 4);
}

// A recorded-style snapshot of an AVX-512 server CPU with BF16 and VNNI.
CpuidSnapshot Avx512Snapshot() {
  CpuidSnapshot s;
  s.leaf0[0] = 0x20;
  SetVendor(s, "GenuineIntel");
  s.leaf1[0] = 0x000806F8;  // family 6, model 0x8F, stepping 8
  s.leaf1[2] = (1u << 12) | (1u << 20) | (1u << 27) | (1u << 28) | (1u << 29);
  s.leaf7_0[0] = 1;
  s.leaf7_0[1] = (1u << 5) | (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
  s.leaf7_0[2] = 1u << 11;
  s.leaf7_1[0] = (1u << 4) | (1u << 5);
  const char brand[] = "Test CPU @ 2.00GHz   ";
  std::memcpy(s.brand.data(), brand, sizeof(brand));
  s.xcr0 = 0xE7;  // x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM
  return s;
}

TEST(DecodeCpuidTest, DecodesIdentity) {
  CpuFeatures f = DecodeCpuid(Avx512Snapshot());
  EXPECT_EQ(f.vendor, "GenuineIntel");
  EXPECT_EQ(f.brand, "Test CPU @ 2.00GHz");
  EXPECT_EQ(f.family, 6);
  EXPECT_EQ(f.model, 0x8F);
  EXPECT_EQ(f.stepping, 8);

  CpuidSnapshot zen3;
  SetVendor(zen3, "AuthenticAMD");
  zen3.leaf1[0] = 0x00A00F11;  // base family 0xF + extended 0xA = 25, model 1, stepping 1
  CpuFeatures amd = DecodeCpuid(zen3);
  EXPECT_EQ(amd.vendor, "AuthenticAMD");
  EXPECT_EQ(amd.family, 25);
  EXPECT_EQ(amd.model, 1);
  EXPECT_EQ(amd.stepping, 1);
}

TEST(DecodeCpuidTest, DecodesAvx512Features) {
  CpuFeatures f = DecodeCpuid(Avx512Snapshot());
  EXPECT_TRUE(f.sse42 && f.avx && f.avx2 && f.fma && f.f16c);
  EXPECT_TRUE(f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq);
  EXPECT_TRUE(f.avx512_bf16);
  EXPECT_TRUE(f.avx512_vnni);
  EXPECT_TRUE(f.avx_vnni);
  EXPECT_FALSE(f.amx_tile);
  EXPECT_EQ(f.MaxIsaLevel(), IsaLevel::kAvx512);
}

TEST(DecodeCpuidTest, OsWithoutZmmStateMeansNoAvx512) {
  CpuidSnapshot s = Avx512Snapshot();
  s.xcr0 = 0x7;  // the OS saves ymm but not zmm state
  CpuFeatures f = DecodeCpuid(s);
  EXPECT_TRUE(f.avx2);
  EXPECT_FALSE(f.avx512f);
  EXPECT_FALSE(f.avx512_bf16);
  EXPECT_EQ(f.MaxIsaLevel(), IsaLevel::kAvx2);

  s.xcr0 = 0x3;  // not even ymm
  f = DecodeCpuid(s);
  EXPECT_FALSE(f.avx2);
  EXPECT_FALSE(f.fma);
  EXPECT_TRUE(f.sse42);
  EXPECT_EQ(f.MaxIsaLevel(), IsaLevel::kGeneric);
}

TEST(DecodeCpuidTest, Avx512NeedsAllFourSubsets) {
  CpuidSnapshot s = Avx512Snapshot();
  s.leaf7_0[1] &= ~(1u << 30);  // no AVX512BW (as on Knights Landing)
  EXPECT_EQ(DecodeCpuid(s).MaxIsaLevel(), IsaLevel::kAvx2);
}

TEST(DecodeCpuidTest, EmptySnapshotIsGeneric) {
  CpuFeatures f = DecodeCpuid(CpuidSnapshot{});
  EXPECT_EQ(f.MaxIsaLevel(), IsaLevel::kGeneric);
  EXPECT_EQ(f.vendor, "");
  for (const auto& [name, present] : f.FeatureList()) EXPECT_FALSE(present) << name;
}

// GCC's CPU builtins exist on x86 only.
#if defined(__x86_64__) || defined(__i386__)
TEST(HostCpuFeaturesTest, AgreesWithTheCompilerBuiltins) {
  __builtin_cpu_init();
  const CpuFeatures& f = HostCpuFeatures();
  EXPECT_EQ(f.avx2, static_cast<bool>(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(f.fma, static_cast<bool>(__builtin_cpu_supports("fma")));
  EXPECT_EQ(f.avx512f, static_cast<bool>(__builtin_cpu_supports("avx512f")));
  EXPECT_EQ(f.sse42, static_cast<bool>(__builtin_cpu_supports("sse4.2")));
  EXPECT_FALSE(f.vendor.empty());
}
#endif

TEST(IsaLevelTest, ParsesAndCaps) {
  for (IsaLevel level : kIsaLevels) {
    auto parsed = ParseIsaLevel(ToString(level));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, level);
  }
  EXPECT_FALSE(ParseIsaLevel("sse9").ok());
  EXPECT_FALSE(ParseIsaLevel("AVX2").ok());

  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kAvx512, std::nullopt), IsaLevel::kAvx512);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kAvx512, IsaLevel::kAvx2), IsaLevel::kAvx2);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kAvx512, IsaLevel::kGeneric), IsaLevel::kGeneric);
  // A cap above the CPU's level never enables instructions the CPU lacks.
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kAvx2, IsaLevel::kAvx512), IsaLevel::kAvx2);

  // ARM levels cap within ARM; a cap of the other architecture leaves generic kernels only.
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kNeonBf16, IsaLevel::kNeonDot), IsaLevel::kNeonDot);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kNeonDot, IsaLevel::kNeonBf16), IsaLevel::kNeonDot);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kNeon, IsaLevel::kGeneric), IsaLevel::kGeneric);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kNeonBf16, IsaLevel::kAvx512), IsaLevel::kGeneric);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kAvx512, IsaLevel::kNeon), IsaLevel::kGeneric);
  EXPECT_EQ(DispatchIsaLevel(IsaLevel::kGeneric, IsaLevel::kNeon), IsaLevel::kGeneric);
}

TEST(IsaLevelTest, LevelsRunWithinTheirArchitecture) {
  for (IsaLevel level : kIsaLevels) {
    EXPECT_TRUE(IsaWithin(IsaLevel::kGeneric, level)) << ToString(level);
    EXPECT_TRUE(IsaWithin(level, level)) << ToString(level);
  }
  EXPECT_TRUE(IsaWithin(IsaLevel::kAvx2, IsaLevel::kAvx512));
  EXPECT_FALSE(IsaWithin(IsaLevel::kAvx512, IsaLevel::kAvx2));
  EXPECT_TRUE(IsaWithin(IsaLevel::kNeon, IsaLevel::kNeonBf16));
  EXPECT_TRUE(IsaWithin(IsaLevel::kNeonDot, IsaLevel::kNeonBf16));
  EXPECT_FALSE(IsaWithin(IsaLevel::kNeonBf16, IsaLevel::kNeonDot));
  EXPECT_FALSE(IsaWithin(IsaLevel::kNeon, IsaLevel::kAvx512));
  EXPECT_FALSE(IsaWithin(IsaLevel::kAvx2, IsaLevel::kNeonBf16));
  EXPECT_FALSE(IsaWithin(IsaLevel::kNeon, IsaLevel::kGeneric));
}

TEST(IsaLevelTest, ReadsTheCapFromTheEnvironment) {
  ::unsetenv("MMTUNE_ISA");
  auto none = IsaCapFromEnvironment();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ::setenv("MMTUNE_ISA", "avx2", 1);
  auto avx2 = IsaCapFromEnvironment();
  ASSERT_TRUE(avx2.ok());
  EXPECT_EQ(**avx2, IsaLevel::kAvx2);

  ::setenv("MMTUNE_ISA", "fast", 1);
  auto bad = IsaCapFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("MMTUNE_ISA"), std::string::npos);
  EXPECT_NE(bad.error().message.find("fast"), std::string::npos);
  ::unsetenv("MMTUNE_ISA");
}

// The core facts table: each measured core family gets its row by vendor, family and model, and
// a core no row knows gets the two-pipe defaults.
TEST(CoreFactsTest, RowsFollowVendorFamilyAndModel) {
  auto facts = [](const char* vendor, int family, int model = 0) -> const CoreFacts& {
    CpuFeatures cpu;
    cpu.vendor = vendor;
    cpu.family = family;
    cpu.model = model;
    return CoreFactsOf(cpu);
  };
  const CoreFacts& zen4 = facts("AuthenticAMD", 0x19, 0x11);
  EXPECT_EQ(zen4.zmm_fmas_per_cycle, 1.0);
  EXPECT_TRUE(zen4.direct_reads_cold_items);
  EXPECT_FALSE(zen4.unrolls_long_packed_k);
  EXPECT_FALSE(zen4.unrolls_long_lowp_k);
  EXPECT_EQ(&facts("AuthenticAMD", 0x19, 0x61), &zen4);  // client Zen 4
  EXPECT_EQ(&facts("AuthenticAMD", 0x19, 0xA0), &zen4);
  const CoreFacts& zen3 = facts("AuthenticAMD", 0x19, 0x01);
  EXPECT_FALSE(zen3.direct_reads_cold_items);
  EXPECT_NE(zen3.name, zen4.name);
  EXPECT_EQ(&facts("AuthenticAMD", 0x19, 0x21), &zen3);  // client Zen 3
  EXPECT_EQ(&facts("AuthenticAMD", 0x19, 0x50), &zen3);
  const CoreFacts& zen5 = facts("AuthenticAMD", 0x1A);
  EXPECT_EQ(zen5.zmm_fmas_per_cycle, 2.0);
  EXPECT_TRUE(zen5.l3_streams_crowded_panels);
  EXPECT_TRUE(zen5.tall_tile_over_one_panel);
  EXPECT_FALSE(zen5.unrolls_long_direct_k);
  EXPECT_TRUE(zen5.direct_reads_cold_items);
  EXPECT_FALSE(zen5.unrolls_long_packed_k);
  EXPECT_TRUE(zen5.unrolls_long_lowp_k);
  EXPECT_EQ(&facts("AuthenticAMD", 0x1B), &zen5);  // later AMD families count as Zen 5
  EXPECT_EQ(&facts("AuthenticAMD", 0x1A, 0x44), &zen5);
  const CoreFacts& intel = facts("GenuineIntel", 6);
  EXPECT_EQ(intel.zmm_fmas_per_cycle, 2.0);
  EXPECT_FALSE(intel.l3_streams_crowded_panels);
  EXPECT_TRUE(intel.tall_tile_over_one_panel);
  EXPECT_TRUE(intel.unrolls_long_direct_k);
  EXPECT_TRUE(intel.direct_reads_cold_items);
  EXPECT_TRUE(intel.unrolls_long_packed_k);
  EXPECT_FALSE(intel.unrolls_long_lowp_k);  // its bf16 and s8 run on AMX
  const CoreFacts& unknown = facts("SomeVendor", 1);
  EXPECT_EQ(unknown.name, "unknown");
  EXPECT_EQ(unknown.zmm_fmas_per_cycle, 2.0);
  EXPECT_NE(&unknown, &intel);
  EXPECT_NE(zen4.name, zen5.name);
}

// A machine's calibrated facts replace its row's, each on its own; unmeasured ones keep the row's.
TEST(CoreFactsTest, MeasuredFactsReplaceTheRowsOneByOne) {
  CpuFeatures cpu;
  cpu.vendor = "AuthenticAMD";
  cpu.family = 0x1A;
  const CoreFacts& row = CoreFactsOf(cpu);
  MeasuredCoreFacts measured;
  const CoreFacts same = CoreFactsOf(cpu, measured);
  EXPECT_EQ(same.name, row.name);
  for (const MeasuredCoreFactField& field : kMeasuredCoreFactFields) {
    EXPECT_EQ(same.*field.fact, row.*field.fact) << field.name;
  }
  for (const MeasuredCoreFactField& field : kMeasuredCoreFactFields) {
    MeasuredCoreFacts one;
    one.*field.measured = !(row.*field.fact);
    const CoreFacts facts = CoreFactsOf(cpu, one);
    for (const MeasuredCoreFactField& other : kMeasuredCoreFactFields) {
      EXPECT_EQ(facts.*other.fact, &other == &field ? !(row.*other.fact) : row.*other.fact)
          << field.name << " measured, " << other.name;
    }
    EXPECT_EQ(facts.zmm_fmas_per_cycle, row.zmm_fmas_per_cycle);
  }
}

}  // namespace
}  // namespace mmtune
