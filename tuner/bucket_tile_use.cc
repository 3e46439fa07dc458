#include "tuner/bucket_tile_use.h"

#include <algorithm>
#include <cstdint>

#include "kernels/default_config.h"
#include "kernels/gemm_internal.h"

namespace mmtune {
namespace {

// The useful share of the tiles that cover `size` rows (or columns) `tile` at a time.
double TileUse(std::int64_t size, int tile) {
  return static_cast<double>(size) / static_cast<double>(detail::RoundUp(size, tile));
}

// The mean of TileUse over `sizes`, from at most this many evenly spread sizes: a long bucket
// (1025..2048) needs no more to be exact to a fraction of a percent.
constexpr std::int64_t kMaxSizesAveraged = 64;

double MeanTileUse(const DimRange& sizes, int tile) {
  const std::int64_t count = sizes.hi - sizes.lo + 1;
  const std::int64_t samples = std::min(count, kMaxSizesAveraged);
  double sum = 0.0;
  for (std::int64_t i = 0; i < samples; ++i) {
    const std::int64_t size = samples == 1 ? sizes.lo : sizes.lo + (count - 1) * i / (samples - 1);
    sum += TileUse(size, tile);
  }
  return sum / static_cast<double>(samples);
}

}  // namespace

std::optional<ServedSizes> SizesServedByProblem(const Problem& problem,
                                                const std::vector<ShapeRangeRecord>& ranges) {
  const Shape shape{problem.m, problem.n, problem.k};
  for (const ShapeRangeRecord& record : ranges) {
    if (!record.range.Contains(shape) || record.ProblemOf(shape) != problem ||
        BucketShapeOf(shape, record.range, record.buckets) != shape) {
      continue;
    }
    return ServedSizes{SizesServedBy(problem.m, record.range.m, record.buckets),
                       SizesServedBy(problem.n, record.range.n, record.buckets)};
  }
  return std::nullopt;
}

double ServedTileUse(const KernelConfig& config, const Problem& problem, const ServedSizes& sizes) {
  if (config.mr <= 0 || config.nr <= 0) return 1.0;
  // Tiles run over the row-major view: a column-major problem's rows are its N.
  const Problem view = RowMajorView(problem);
  const bool swapped = problem.layout == Layout::kColMajor;
  const DimRange& rows = swapped ? sizes.n : sizes.m;
  const DimRange& cols = swapped ? sizes.m : sizes.n;
  double use = 1.0;
  if (config.PadsPartialRows(problem.dtype)) {
    use *= MeanTileUse(rows, config.mr) / TileUse(view.m, config.mr);
  }
  if (config.PadsPartialColumns(problem.dtype)) {
    use *= MeanTileUse(cols, config.nr) / TileUse(view.n, config.nr);
  }
  return use;
}

}  // namespace mmtune
