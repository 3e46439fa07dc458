// What the analytical model knows of a core that its ISA flags do not say: one row per core
// family, each fact measured (docs/analytical-model.md gives the measurements), looked up by
// vendor and family. The model reads facts, never a CPU's name; what no row knows, the tuner
// finds.
#pragma once

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
};

// The row of `cpu`'s core family; unknown cores get the defaults above (two pipes, the rules
// measured on Intel's two-pipe server cores).
const CoreFacts& CoreFactsOf(const CpuFeatures& cpu);

}  // namespace mmtune
