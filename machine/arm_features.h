// What an AArch64 CPU can execute, read from the kernel's HWCAP / HWCAP2 auxiliary vector entries,
// and who made it, read from its MIDR_EL1. Reading is split from decoding so that tests can feed
// the values of ARM cores on any machine.
#pragma once

#include <cstdint>

#include "machine/cpu_features.h"

namespace mmtune {

struct ArmIdSnapshot {
  std::uint64_t hwcap = 0;   // getauxval(AT_HWCAP)
  std::uint64_t hwcap2 = 0;  // getauxval(AT_HWCAP2)
  std::uint64_t midr = 0;    // MIDR_EL1: implementer, variant, architecture, part, revision
};

// Reads this CPU's values (zeros on other architectures; the MIDR zero where the kernel does not
// let user code read it and /proc/cpuinfo does not say it).
ArmIdSnapshot ReadArmIds();

CpuFeatures DecodeArmIds(const ArmIdSnapshot& snapshot);

}  // namespace mmtune
