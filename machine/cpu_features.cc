#include "machine/cpu_features.h"

#include <cstdlib>
#include <cstring>

#include "machine/arm_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MMTUNE_X86 1
#endif

namespace mmtune {

const char* ToString(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return "generic";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx512: return "avx512";
    case IsaLevel::kNeon: return "neon";
    case IsaLevel::kNeonDot: return "neon-dot";
    case IsaLevel::kNeonBf16: return "neon-bf16";
  }
  return "?";
}

Result<IsaLevel> ParseIsaLevel(std::string_view text) {
  for (IsaLevel level : kIsaLevels) {
    if (text == ToString(level)) return level;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown ISA level '" + std::string(text) +
                       "' (expected generic, avx2, avx512, neon, neon-dot or neon-bf16)");
}

namespace {
CpuArch ArchOf(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return CpuArch::kOther;
    case IsaLevel::kAvx2:
    case IsaLevel::kAvx512: return CpuArch::kX86;
    case IsaLevel::kNeon:
    case IsaLevel::kNeonDot:
    case IsaLevel::kNeonBf16: return CpuArch::kArm64;
  }
  return CpuArch::kOther;
}
}  // namespace

bool IsaWithin(IsaLevel level, IsaLevel top) {
  if (level == IsaLevel::kGeneric) return true;
  return ArchOf(level) == ArchOf(top) && level <= top;
}

CpuidSnapshot ReadCpuid() {
  CpuidSnapshot s;
#ifdef MMTUNE_X86
  auto read = [](unsigned leaf, unsigned subleaf, std::uint32_t* out) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(leaf, subleaf, &a, &b, &c, &d)) {
      out[0] = a; out[1] = b; out[2] = c; out[3] = d;
    }
  };
  read(0, 0, s.leaf0.data());
  const std::uint32_t max_leaf = s.leaf0[0];
  if (max_leaf >= 1) read(1, 0, s.leaf1.data());
  if (max_leaf >= 7) {
    read(7, 0, s.leaf7_0.data());
    if (s.leaf7_0[0] >= 1) read(7, 1, s.leaf7_1.data());
  }
  const unsigned max_extended = __get_cpuid_max(0x80000000u, nullptr);
  if (max_extended >= 0x80000004u) {
    for (unsigned i = 0; i < 3; ++i) read(0x80000002u + i, 0, s.brand.data() + 4 * i);
  }
  const bool osxsave = (s.leaf1[2] >> 27) & 1u;
  if (osxsave) {
    std::uint32_t lo = 0, hi = 0;
    // XGETBV with ECX = 0 reads XCR0; encoded as bytes so no `-mxsave` flag is needed.
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    s.xcr0 = (static_cast<std::uint64_t>(hi) << 32) | lo;
  }
#endif
  return s;
}

namespace {

bool Bit(std::uint32_t value, int bit) { return (value >> bit) & 1u; }

std::string Trim(std::string text) {
  const char* space = " \t\n\r";
  const auto first = text.find_first_not_of(space);
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(space);
  return text.substr(first, last - first + 1);
}

}  // namespace

CpuFeatures DecodeCpuid(const CpuidSnapshot& s) {
  CpuFeatures f;
  char vendor[13] = {};
  std::memcpy(vendor + 0, &s.leaf0[1], 4);  // EBX, EDX, ECX spell the vendor in that order
  std::memcpy(vendor + 4, &s.leaf0[3], 4);
  std::memcpy(vendor + 8, &s.leaf0[2], 4);
  f.vendor = vendor;

  char brand[49] = {};
  std::memcpy(brand, s.brand.data(), 48);
  f.brand = Trim(brand);

  const std::uint32_t eax1 = s.leaf1[0];
  const int base_family = (eax1 >> 8) & 0xF;
  const int base_model = (eax1 >> 4) & 0xF;
  f.stepping = eax1 & 0xF;
  f.family = base_family == 0xF ? base_family + static_cast<int>((eax1 >> 20) & 0xFF)
                                : base_family;
  f.model = (base_family == 0x6 || base_family == 0xF)
                ? base_model + static_cast<int>(((eax1 >> 16) & 0xF) << 4)
                : base_model;

  // XCR0: bit 1 SSE, bit 2 AVX (ymm upper halves), bits 5-7 opmask + zmm, bits 17-18 AMX tiles.
  const bool os_ymm = (s.xcr0 & 0x6) == 0x6;
  const bool os_zmm = os_ymm && (s.xcr0 & 0xE0) == 0xE0;
  const bool os_amx = (s.xcr0 & 0x60000) == 0x60000;

  const std::uint32_t ecx1 = s.leaf1[2];
  const std::uint32_t ebx7 = s.leaf7_0[1];
  const std::uint32_t ecx7 = s.leaf7_0[2];
  const std::uint32_t edx7 = s.leaf7_0[3];
  const std::uint32_t eax7_1 = s.leaf7_1[0];

  f.sse42 = Bit(ecx1, 20);
  f.avx = Bit(ecx1, 28) && os_ymm;
  f.fma = Bit(ecx1, 12) && os_ymm;
  f.f16c = Bit(ecx1, 29) && os_ymm;
  f.avx2 = Bit(ebx7, 5) && os_ymm;
  f.avx_vnni = Bit(eax7_1, 4) && os_ymm;
  f.avx512f = Bit(ebx7, 16) && os_zmm;
  f.avx512dq = Bit(ebx7, 17) && os_zmm;
  f.avx512bw = Bit(ebx7, 30) && os_zmm;
  f.avx512vl = Bit(ebx7, 31) && os_zmm;
  f.avx512_vnni = Bit(ecx7, 11) && os_zmm;
  f.avx512_fp16 = Bit(edx7, 23) && os_zmm;
  f.avx512_bf16 = Bit(eax7_1, 5) && os_zmm;
  f.amx_bf16 = Bit(edx7, 22) && os_amx;
  f.amx_tile = Bit(edx7, 24) && os_amx;
  f.amx_int8 = Bit(edx7, 25) && os_amx;
  return f;
}

IsaLevel CpuFeatures::MaxIsaLevel() const {
  if (arch == CpuArch::kArm64) {
    if (!asimd) return IsaLevel::kGeneric;
    if (!asimd_dot) return IsaLevel::kNeon;
    return arm_bf16 ? IsaLevel::kNeonBf16 : IsaLevel::kNeonDot;
  }
  if (avx512f && avx512bw && avx512vl && avx512dq && fma) return IsaLevel::kAvx512;
  if (avx2 && fma) return IsaLevel::kAvx2;
  return IsaLevel::kGeneric;
}

std::vector<std::pair<std::string, bool>> CpuFeatures::FeatureList() const {
  if (arch == CpuArch::kArm64) {
    return {
        {"asimd", asimd}, {"asimddp", asimd_dot}, {"bf16", arm_bf16}, {"i8mm", i8mm},
        {"sve", sve},     {"sve2", sve2},         {"sme", sme},
    };
  }
  return {
      {"sse4.2", sse42},           {"avx", avx},
      {"avx2", avx2},              {"fma", fma},
      {"f16c", f16c},              {"avx512f", avx512f},
      {"avx512bw", avx512bw},      {"avx512vl", avx512vl},
      {"avx512dq", avx512dq},      {"avx512_bf16", avx512_bf16},
      {"avx512_vnni", avx512_vnni}, {"avx512_fp16", avx512_fp16},
      {"avx_vnni", avx_vnni},      {"amx_tile", amx_tile},
      {"amx_bf16", amx_bf16},      {"amx_int8", amx_int8},
  };
}

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures features = [] {
#if defined(__aarch64__)
    return DecodeArmIds(ReadArmIds());
#else
    CpuFeatures decoded = DecodeCpuid(ReadCpuid());
#if !defined(MMTUNE_X86)
    decoded.arch = CpuArch::kOther;
#endif
    return decoded;
#endif
  }();
  return features;
}

IsaLevel DispatchIsaLevel(IsaLevel cpu_max, std::optional<IsaLevel> cap) {
  if (!cap || IsaWithin(cpu_max, *cap)) return cpu_max;
  return IsaWithin(*cap, cpu_max) ? *cap : IsaLevel::kGeneric;
}

Result<std::optional<IsaLevel>> IsaCapFromEnvironment() {
  const char* value = std::getenv("MMTUNE_ISA");
  if (value == nullptr || *value == '\0') return std::optional<IsaLevel>();
  auto level = ParseIsaLevel(value);
  if (!level) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "MMTUNE_ISA: " + level.error().message);
  }
  return std::optional<IsaLevel>(*level);
}

}  // namespace mmtune
