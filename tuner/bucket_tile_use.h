// A bucket's winner runs every shape its bucket serves (common/shape_range.h), not only the
// bucket shape it was timed on; a register tile that divides the bucket shape can still compute
// much padding on the sizes below it (14 columns in 8-column tiles compute 16). The confirmation
// of a bucket shape weighs its finalists' speeds by the share of useful tile work over those
// sizes.
#pragma once

#include <optional>
#include <vector>

#include "common/shape_range.h"
#include "db/store.h"
#include "kernels/kernel_config.h"
#include "mmtune/types.h"

namespace mmtune {

// The sizes of M and N that run with a bucket shape's winner.
struct ServedSizes {
  DimRange m, n;
};

// The sizes `problem`'s winner serves when it is a bucket shape of one of `ranges` of its kind
// and thread budget; nullopt for a shape that is no range's bucket.
std::optional<ServedSizes> SizesServedByProblem(const Problem& problem,
                                                const std::vector<ShapeRangeRecord>& ranges);

// The useful share of `config`'s register-tile work averaged over `sizes`, relative to that
// share on `problem` itself (a plain call): 1 where its tiles fit the served sizes as well as
// the bucket shape; rows and columns counted only where partial tiles are padded
// (PadsPartialRows, PadsPartialColumns), not where they run in kernels of their size.
double ServedTileUse(const KernelConfig& config, const Problem& problem, const ServedSizes& sizes);

}  // namespace mmtune
