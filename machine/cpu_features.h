// What the CPU can execute, read from CPUID and XGETBV, and the kernel ISA level the dispatcher
// uses. Detection is split from decoding so that tests can feed recorded register values of CPUs
// this machine is not.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mmtune/result.h"

namespace mmtune {

// The kernel ISA levels. Generic runs everywhere; the others are ordered within their
// architecture (IsaWithin): each level's kernels run on every CPU of a higher level.
enum class IsaLevel : std::uint8_t {
  kGeneric = 0,   // portable C++ (GCC vector extensions); compiles for any target
  kAvx2 = 1,      // AVX2 + FMA, 16 ymm registers
  kAvx512 = 2,    // AVX-512 F/BW/VL/DQ, 32 zmm registers
  kNeon = 3,      // AArch64 Advanced SIMD, 32 128-bit registers
  kNeonDot = 4,   // + SDOT (Armv8.2 dot product); USDOT where the CPU has I8MM
  kNeonBf16 = 5,  // + BFDOT (BF16)
};

// Every level, each architecture's in ascending order.
inline constexpr IsaLevel kIsaLevels[] = {IsaLevel::kGeneric,  IsaLevel::kAvx2,
                                          IsaLevel::kAvx512,   IsaLevel::kNeon,
                                          IsaLevel::kNeonDot, IsaLevel::kNeonBf16};

const char* ToString(IsaLevel level);
Result<IsaLevel> ParseIsaLevel(std::string_view text);

// Whether kernels of `level` run where the kernel level is `top`: generic ones everywhere, the
// others where `top` is of the same architecture and not below `level`.
bool IsaWithin(IsaLevel level, IsaLevel top);

// Raw register values of the CPUID leaves mmtune decodes (eax, ebx, ecx, edx each) plus XCR0.
struct CpuidSnapshot {
  std::array<std::uint32_t, 4> leaf0{};        // max leaf, vendor string
  std::array<std::uint32_t, 4> leaf1{};        // family/model, SSE..AVX, FMA, OSXSAVE
  std::array<std::uint32_t, 4> leaf7_0{};      // AVX2, AVX-512 family, AMX
  std::array<std::uint32_t, 4> leaf7_1{};      // AVX512_BF16, AVX-VNNI
  std::array<std::uint32_t, 12> brand{};       // leaves 0x80000002..4
  std::uint64_t xcr0 = 0;                      // which register states the OS saves
};

// Reads the snapshot of the CPU this thread runs on (zeros on non-x86 builds).
CpuidSnapshot ReadCpuid();

// The instruction-set family a CPU's features were read from.
enum class CpuArch : std::uint8_t { kX86, kArm64, kOther };

struct CpuFeatures {
  CpuArch arch = CpuArch::kX86;
  // x86: the CPUID vendor string, display family and model. ARM: the MIDR's implementer by name
  // ("ARM", "Ampere", ...), the implementer code as the family, the part number as the model
  // and the variant and revision as the stepping (variant * 16 + revision).
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "ARM", ...
  std::string brand;   // marketing name, trimmed; may be generic under a hypervisor
  int family = 0;
  int model = 0;
  int stepping = 0;

  // Instruction-set extensions, already masked by what the OS saves (XCR0): an AVX-512 CPU under
  // an OS that does not save zmm state reports no AVX-512 here.
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_bf16 = false;
  bool avx512_vnni = false;
  bool avx512_fp16 = false;
  bool avx_vnni = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;

  // AArch64 extensions (the kernel's HWCAP and HWCAP2 bits).
  bool asimd = false;      // Advanced SIMD (NEON)
  bool asimd_dot = false;  // SDOT / UDOT
  bool arm_bf16 = false;   // BFDOT / BFMMLA
  bool i8mm = false;       // SMMLA / UMMLA / USMMLA
  bool sve = false;
  bool sve2 = false;
  bool sme = false;

  // The highest kernel level this CPU (and OS) supports.
  IsaLevel MaxIsaLevel() const;
  // (name, present) for every extension of the CPU's architecture, in a stable order for
  // printing and JSON.
  std::vector<std::pair<std::string, bool>> FeatureList() const;
};

CpuFeatures DecodeCpuid(const CpuidSnapshot& snapshot);

// The features of this machine's CPU, detected once.
const CpuFeatures& HostCpuFeatures();

// The level the dispatcher uses: the CPU's maximum, lowered to `cap` when one is given. A cap
// above what the CPU supports has no effect (mmtune never runs an instruction the CPU lacks); a
// cap of another architecture leaves generic kernels only.
IsaLevel DispatchIsaLevel(IsaLevel cpu_max, std::optional<IsaLevel> cap);

// The cap requested through the `MMTUNE_ISA` environment variable: nullopt when unset or empty,
// an error naming the variable when its value is not a level.
Result<std::optional<IsaLevel>> IsaCapFromEnvironment();

}  // namespace mmtune
