#include "kernels/lowp_packing.h"

#include <cstdint>

#include "mmtune/bf16.h"

namespace mmtune {
namespace {

// One panel of `width` lines (rows of A or columns of B), `valid` of them real: the value of
// line `l` at k offset `p` is `at(l, p)`. Written group by group so that the output is
// sequential; the reads follow whichever storage order `at` has.
template <typename T, typename At>
T* PackPanel(int width, int valid, std::int64_t depth, int group, At at, T* out) {
  const std::int64_t groups = (depth + group - 1) / group;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t p0 = g * group;
    for (int l = 0; l < width; ++l) {
      for (int t = 0; t < group; ++t) {
        const std::int64_t p = p0 + t;
        *out++ = l < valid && p < depth ? at(l, p) : T{};
      }
    }
  }
  return out;
}

}  // namespace

template <typename T>
void PackAGrouped(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0,
                  std::int64_t depth, int mr, int group, T* packed) {
  for (std::int64_t panel = 0; panel < rows; panel += mr) {
    const int valid = static_cast<int>(rows - panel < mr ? rows - panel : mr);
    const std::int64_t first = row0 + panel;
    packed = PackPanel<T>(mr, valid, depth, group,
                          [&](int i, std::int64_t p) { return a.At(first + i, col0 + p); },
                          packed);
  }
}

template <typename T>
void PackBGrouped(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0,
                  std::int64_t cols, int nr, int group, T* packed) {
  for (std::int64_t panel = 0; panel < cols; panel += nr) {
    const int valid = static_cast<int>(cols - panel < nr ? cols - panel : nr);
    const std::int64_t first = col0 + panel;
    packed = PackPanel<T>(nr, valid, depth, group,
                          [&](int j, std::int64_t p) { return b.At(row0 + p, first + j); },
                          packed);
  }
}

template void PackAGrouped<BFloat16>(const MatrixView<BFloat16>&, std::int64_t, std::int64_t,
                                     std::int64_t, std::int64_t, int, int, BFloat16*);
template void PackBGrouped<BFloat16>(const MatrixView<BFloat16>&, std::int64_t, std::int64_t,
                                     std::int64_t, std::int64_t, int, int, BFloat16*);
template void PackAGrouped<std::uint8_t>(const MatrixView<std::uint8_t>&, std::int64_t,
                                         std::int64_t, std::int64_t, std::int64_t, int, int,
                                         std::uint8_t*);
template void PackBGrouped<std::int8_t>(const MatrixView<std::int8_t>&, std::int64_t, std::int64_t,
                                        std::int64_t, std::int64_t, int, int, std::int8_t*);

}  // namespace mmtune
