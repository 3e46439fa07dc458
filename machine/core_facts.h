// What the analytical model knows of a core that its ISA flags do not say: one row per core
// family, each fact measured (docs/analytical-model.md gives the measurements), looked up by
// vendor, family and model. The model reads facts, never a CPU's name; what no row knows, the tuner
// finds.
#pragma once

#include <optional>
#include <string_view>

#include "machine/cpu_features.h"

namespace mmtune {

struct CoreFacts {
  std::string_view name;  // the cores the row describes, for logs and docs
  // 512-bit FMAs completed per cycle (256-bit ones: two on every x86 core listed), where the
  // machine's peaks did not measure them (Machine::zmm_fmas_per_cycle).
  double zmm_fmas_per_cycle = 2.0;
  // With two zmm FMA pipes: a direct B panel that crowds its L2 sets streams from L3 fast
  // enough to beat packing B for up to a few hundred rows (step 1).
  bool l3_streams_crowded_panels = false;
  // A tall direct tile over a single row panel beats two shorter ones whatever its
  // accumulators (step 2).
  bool tall_tile_over_one_panel = false;
  // With two zmm FMA pipes: long direct k loops run faster unrolled by 4 (step 2).
  bool unrolls_long_direct_k = true;
  // The items of a batch that spills L2, their operands arriving from beyond it, run faster
  // read in place by the direct family than packed (Batches).
  bool direct_reads_cold_items = true;
  // With two zmm FMA pipes: packed f32 and f64 k loops of a long k block run faster unrolled by
  // 4 (step 2). Not calibrated: the row's value holds.
  bool unrolls_long_packed_k = true;
  // With two zmm FMA pipes: the bf16 and s8 dot-product k loops of a long packed k block run
  // faster unrolled by 4 (docs/low-precision.md). Not calibrated.
  bool unrolls_long_lowp_k = false;
};

// The row of `cpu`'s core family; unknown cores get the defaults above (two pipes, the rules
// measured on Intel's two-pipe server cores).
const CoreFacts& CoreFactsOf(const CpuFeatures& cpu);

// The boolean facts as this machine's calibration measured them (tuner/core_calibration.h,
// stored with the peaks), each unset where it was not measured.
struct MeasuredCoreFacts {
  std::optional<bool> l3_streams_crowded_panels;
  std::optional<bool> tall_tile_over_one_panel;
  std::optional<bool> unrolls_long_direct_k;
  std::optional<bool> direct_reads_cold_items;

  friend bool operator==(const MeasuredCoreFacts&, const MeasuredCoreFacts&) = default;
};

// The measured facts' members, by the name the peaks' JSON and the logs give them.
struct MeasuredCoreFactField {
  std::string_view name;
  std::optional<bool> MeasuredCoreFacts::*measured;
  bool CoreFacts::*fact;
};
inline constexpr MeasuredCoreFactField kMeasuredCoreFactFields[] = {
    {"l3_streams_crowded_panels", &MeasuredCoreFacts::l3_streams_crowded_panels,
     &CoreFacts::l3_streams_crowded_panels},
    {"tall_tile_over_one_panel", &MeasuredCoreFacts::tall_tile_over_one_panel,
     &CoreFacts::tall_tile_over_one_panel},
    {"unrolls_long_direct_k", &MeasuredCoreFacts::unrolls_long_direct_k,
     &CoreFacts::unrolls_long_direct_k},
    {"direct_reads_cold_items", &MeasuredCoreFacts::direct_reads_cold_items,
     &CoreFacts::direct_reads_cold_items},
};

// `cpu`'s row with every measured fact in place of the row's: what the machine showed wins over
// what its core family was seen to do elsewhere.
CoreFacts CoreFactsOf(const CpuFeatures& cpu, const MeasuredCoreFacts& measured);

}  // namespace mmtune
