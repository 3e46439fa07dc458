#include "machine/arm_features.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace mmtune {
namespace {

// The kernel's HWCAP and HWCAP2 bits (arch/arm64/include/uapi/asm/hwcap.h).
constexpr std::uint64_t kHwcapAsimd = 1ull << 1;
constexpr std::uint64_t kHwcapCpuid = 1ull << 11;  // MRS of the ID registers is emulated
constexpr std::uint64_t kHwcapAsimdDot = 1ull << 20;
constexpr std::uint64_t kHwcapSve = 1ull << 22;
constexpr std::uint64_t kHwcap2Sve2 = 1ull << 1;
constexpr std::uint64_t kHwcap2I8mm = 1ull << 13;
constexpr std::uint64_t kHwcap2Bf16 = 1ull << 14;
constexpr std::uint64_t kHwcap2Sme = 1ull << 23;

struct Implementer {
  int code;
  const char* name;
};
// MIDR implementer codes (the Arm ARM, MIDR_EL1).
constexpr std::array<Implementer, 11> kImplementers = {{
    {0x41, "ARM"},
    {0x42, "Broadcom"},
    {0x43, "Cavium"},
    {0x46, "Fujitsu"},
    {0x48, "HiSilicon"},
    {0x4e, "NVIDIA"},
    {0x50, "APM"},
    {0x51, "Qualcomm"},
    {0x61, "Apple"},
    {0x6d, "Microsoft"},
    {0xc0, "Ampere"},
}};

struct Part {
  int implementer;
  int part;
  const char* name;
};
// Cores seen in servers and boards, for `mmtune info`; the fingerprint uses the codes.
constexpr std::array<Part, 14> kParts = {{
    {0x41, 0xd03, "Cortex-A53"},
    {0x41, 0xd07, "Cortex-A57"},
    {0x41, 0xd08, "Cortex-A72"},
    {0x41, 0xd0b, "Cortex-A76"},
    {0x41, 0xd0c, "Neoverse-N1"},
    {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd49, "Neoverse-N2"},
    {0x41, 0xd4f, "Neoverse-V2"},
    {0x41, 0xd84, "Neoverse-V3"},
    {0x41, 0xd8e, "Neoverse-N3"},
    {0x48, 0xd01, "Kunpeng-920"},
    {0x4e, 0x004, "Carmel"},
    {0xc0, 0xac3, "AmpereOne"},
    {0x51, 0x001, "Oryon"},
}};

std::string Hex(int value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%x", value);
  return text;
}

// The MIDR from /proc/cpuinfo's "CPU implementer", "CPU variant", "CPU part" and "CPU revision"
// lines, the first of each (the first CPU's); 0 where they are missing, as on an emulator's x86
// host.
[[maybe_unused]] std::uint64_t MidrFromCpuinfo() {
  constexpr std::array<std::string_view, 4> kKeys = {"CPU implementer", "CPU variant", "CPU part",
                                                     "CPU revision"};
  std::array<std::uint64_t, 4> fields{};
  std::array<bool, 4> seen{};
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    for (std::size_t i = 0; i < kKeys.size(); ++i) {
      if (!seen[i] && colon != std::string::npos && line.starts_with(kKeys[i])) {
        fields[i] = std::strtoull(line.c_str() + colon + 1, nullptr, 0);
        seen[i] = true;
      }
    }
  }
  return (fields[0] & 0xff) << 24 | (fields[1] & 0xf) << 20 | (fields[2] & 0xfff) << 4 |
         (fields[3] & 0xf);
}

}  // namespace

ArmIdSnapshot ReadArmIds() {
  ArmIdSnapshot s;
#if defined(__aarch64__) && defined(__linux__)
  s.hwcap = getauxval(AT_HWCAP);
  s.hwcap2 = getauxval(AT_HWCAP2);
  if (s.hwcap & kHwcapCpuid) {
    std::uint64_t midr = 0;
    __asm__ volatile("mrs %0, midr_el1" : "=r"(midr));
    s.midr = midr;
  } else {
    s.midr = MidrFromCpuinfo();
  }
#endif
  return s;
}

CpuFeatures DecodeArmIds(const ArmIdSnapshot& s) {
  CpuFeatures f;
  f.arch = CpuArch::kArm64;
  const int implementer = static_cast<int>((s.midr >> 24) & 0xff);
  const int variant = static_cast<int>((s.midr >> 20) & 0xf);
  const int part = static_cast<int>((s.midr >> 4) & 0xfff);
  const int revision = static_cast<int>(s.midr & 0xf);
  f.family = implementer;
  f.model = part;
  f.stepping = variant * 16 + revision;
  f.vendor = "arm-implementer-" + Hex(implementer);
  for (const Implementer& known : kImplementers) {
    if (known.code == implementer) f.vendor = known.name;
  }
  f.brand = "part " + Hex(part);
  for (const Part& known : kParts) {
    if (known.implementer == implementer && known.part == part) f.brand = known.name;
  }
  f.asimd = s.hwcap & kHwcapAsimd;
  f.asimd_dot = s.hwcap & kHwcapAsimdDot;
  f.sve = s.hwcap & kHwcapSve;
  f.sve2 = s.hwcap2 & kHwcap2Sve2;
  f.i8mm = s.hwcap2 & kHwcap2I8mm;
  f.arm_bf16 = s.hwcap2 & kHwcap2Bf16;
  f.sme = s.hwcap2 & kHwcap2Sme;
  return f;
}

}  // namespace mmtune
