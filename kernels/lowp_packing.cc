#include "kernels/lowp_packing.h"

#include <cstdint>
#include <cstring>

#include "mmtune/bf16.h"

namespace mmtune {
namespace {

// One panel of `width` lines (rows of A or columns of B), `valid` of them real: the value of
// line `l` at k offset `p` is base[l * line_stride + p * k_stride] (one of the strides is 1).
// Written group by group so that the output is sequential. Whole groups of a full panel take a
// fast path without bounds checks (a 4-byte copy per line when k is contiguous, G rows
// interleaved when lines are); the edges (missing lines, the last partial group) are zero-filled
// element by element.
template <typename T, int G>
T* PackPanel(int width, int valid, std::int64_t depth, const T* base, std::int64_t line_stride,
             std::int64_t k_stride, T* out) {
  const std::int64_t groups = (depth + G - 1) / G;
  const std::int64_t fast_groups = valid == width ? depth / G : 0;
  std::int64_t g = 0;
  if (k_stride == 1) {
    for (; g < fast_groups; ++g) {
      const T* first = base + g * G;
      for (int l = 0; l < width; ++l, out += G) {
        std::memcpy(out, first + l * line_stride, G * sizeof(T));
      }
    }
  } else if (line_stride == 1) {
    for (; g < fast_groups; ++g) {
      const T* rows[G];
      for (int t = 0; t < G; ++t) rows[t] = base + (g * G + t) * k_stride;
      for (int l = 0; l < width; ++l) {
        for (int t = 0; t < G; ++t) *out++ = rows[t][l];
      }
    }
  }
  for (; g < groups; ++g) {
    for (int l = 0; l < width; ++l) {
      for (int t = 0; t < G; ++t) {
        const std::int64_t p = g * G + t;
        *out++ = l < valid && p < depth ? base[l * line_stride + p * k_stride] : T{};
      }
    }
  }
  return out;
}

template <typename T>
T* PackPanelOfGroup(int group, int width, int valid, std::int64_t depth, const T* base,
                    std::int64_t line_stride, std::int64_t k_stride, T* out) {
  switch (group) {
    case 2: return PackPanel<T, 2>(width, valid, depth, base, line_stride, k_stride, out);
    case 4: return PackPanel<T, 4>(width, valid, depth, base, line_stride, k_stride, out);
    default: return PackPanel<T, 1>(width, valid, depth, base, line_stride, k_stride, out);
  }
}

}  // namespace

template <typename T>
void PackAGrouped(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0,
                  std::int64_t depth, int mr, int group, T* packed) {
  // op(A)(i, p) = a.At(i, p): rows are the lines.
  const bool k_contiguous = a.trans == Trans::kNo;
  const std::int64_t line_stride = k_contiguous ? a.ld : 1;
  const std::int64_t k_stride = k_contiguous ? 1 : a.ld;
  for (std::int64_t panel = 0; panel < rows; panel += mr) {
    const int valid = static_cast<int>(rows - panel < mr ? rows - panel : mr);
    packed = PackPanelOfGroup<T>(group, mr, valid, depth, &a.At(row0 + panel, col0), line_stride,
                                 k_stride, packed);
  }
}

template <typename T>
void PackBGrouped(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0,
                  std::int64_t cols, int nr, int group, T* packed) {
  // op(B)(p, j) = b.At(p, j): columns are the lines.
  const bool k_contiguous = b.trans == Trans::kYes;
  const std::int64_t line_stride = k_contiguous ? b.ld : 1;
  const std::int64_t k_stride = k_contiguous ? 1 : b.ld;
  for (std::int64_t panel = 0; panel < cols; panel += nr) {
    const int valid = static_cast<int>(cols - panel < nr ? cols - panel : nr);
    packed = PackPanelOfGroup<T>(group, nr, valid, depth, &b.At(row0, col0 + panel), line_stride,
                                 k_stride, packed);
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
