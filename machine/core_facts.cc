#include "machine/core_facts.h"

#include <array>

namespace mmtune {
namespace {

struct Row {
  std::string_view vendor;
  int min_family;  // display family, inclusive
  int max_family;
  int min_model;  // display model, inclusive
  int max_model;
  const CoreFacts* facts;
};

// Zen 3 and Zen 4 share AMD family 0x19 and differ by model: Zen 4 runs a 512-bit FMA as two
// halves on its two 256-bit pipes and its cold batch items direct, Zen 3 (AVX2 only) runs them
// packed faster. Zen 5 (0x1A; later AMD families count as Zen 5 until shown to differ): two full
// zmm pipes and an L3 that feeds crowded panels; its packed f32 and f64 k loops keep ku1
// (unrolled ran level), its bf16 and s8 ones unroll. Intel: two zmm pipes on the server cores
// measured. A machine whose peaks calibrated the boolean facts runs with its own
// (tuner/core_calibration.h).
constexpr CoreFacts kZen3{"AMD Zen 3", 1.0, false, false, false, false, false};
constexpr CoreFacts kZen4{"AMD Zen 4", 1.0, false, false, false, true, false};
constexpr CoreFacts kZen5{"AMD Zen 5", 2.0, true, true, false, true, false, true};
constexpr CoreFacts kIntel{"Intel", 2.0, false, true, true, true, true};

// The first row that matches a core is its row.
constexpr std::array kRows = {
    Row{"AuthenticAMD", 0x19, 0x19, 0x10, 0x1F, &kZen4},  // Genoa
    Row{"AuthenticAMD", 0x19, 0x19, 0x60, 0x7F, &kZen4},  // Raphael, Phoenix
    Row{"AuthenticAMD", 0x19, 0x19, 0xA0, 0xAF, &kZen4},  // Bergamo, Siena
    Row{"AuthenticAMD", 0x19, 0x19, 0x00, 0xFF, &kZen3},
    Row{"AuthenticAMD", 0x1A, 0xFF, 0x00, 0xFF, &kZen5},
    Row{"GenuineIntel", 0, 0xFF, 0x00, 0xFF, &kIntel},
};

constexpr CoreFacts kUnknown{"unknown", 2.0, false, true, true, true, true};

}  // namespace

const CoreFacts& CoreFactsOf(const CpuFeatures& cpu) {
  for (const Row& row : kRows) {
    if (cpu.vendor == row.vendor && cpu.family >= row.min_family && cpu.family <= row.max_family &&
        cpu.model >= row.min_model && cpu.model <= row.max_model) {
      return *row.facts;
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
