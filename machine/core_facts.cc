#include "machine/core_facts.h"

#include <array>

namespace mmtune {
namespace {

struct Row {
  std::string_view vendor;
  int min_family;  // display family, inclusive
  int max_family;
  CoreFacts facts;
};

// Zen 3 and Zen 4 (AMD family 0x19): Zen 4 runs a 512-bit FMA as two halves on its two 256-bit
// pipes; Zen 3 runs cold batch items packed faster. Zen 5 (0x1A; later AMD families count as
// Zen 5 until shown to differ): two full zmm pipes and an L3 that feeds crowded panels; its
// packed k loops keep ku1, unrolling them being unmeasured there. Intel: two zmm pipes on the
// server cores measured. A machine whose peaks calibrated the boolean facts runs with its own
// (tuner/core_calibration.h).
constexpr std::array kRows = {
    Row{"AuthenticAMD", 0x19, 0x19, {"AMD Zen 3 / Zen 4", 1.0, false, false, false, false, false}},
    Row{"AuthenticAMD", 0x1A, 0xFF, {"AMD Zen 5", 2.0, true, true, false, true, false}},
    Row{"GenuineIntel", 0, 0xFF, {"Intel", 2.0, false, true, true, true, true}},
};

constexpr CoreFacts kUnknown{"unknown", 2.0, false, true, true, true, true};

}  // namespace

const CoreFacts& CoreFactsOf(const CpuFeatures& cpu) {
  for (const Row& row : kRows) {
    if (cpu.vendor == row.vendor && cpu.family >= row.min_family && cpu.family <= row.max_family) {
      return row.facts;
    }
  }
  return kUnknown;
}

CoreFacts CoreFactsOf(const CpuFeatures& cpu, const MeasuredCoreFacts& measured) {
  CoreFacts facts = CoreFactsOf(cpu);
  for (const MeasuredCoreFactField& field : kMeasuredCoreFactFields) {
    if (const std::optional<bool>& value = measured.*field.measured; value) {
      facts.*field.fact = *value;
    }
  }
  return facts;
}

}  // namespace mmtune
