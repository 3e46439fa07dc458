// PackA and PackB against MatrixView::At, element by element: every transpose, panel widths
// of the registered tiles and odd ones, partial panels (zero-padded), depths around the copy
// loops' vector and cache-line steps, leading dimensions past the minimum, and a canary after
// the packed block.
#include "kernels/packing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mmtune/bf16.h"

namespace mmtune {
namespace {

constexpr std::int64_t kCanary = 64;

template <typename T>
std::vector<T> Numbered(std::int64_t count) {
  std::vector<T> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = T(i + 1);
  return values;
}

// A stored matrix whose op() is at least `rows` x `cols` from (row0, col0), with 3 spare
// elements in each leading dimension.
template <typename T>
struct Source {
  std::vector<T> data;
  MatrixView<T> view;

  Source(std::int64_t rows, std::int64_t cols, Trans trans) {
    const std::int64_t stored_rows = trans == Trans::kNo ? rows : cols;
    const std::int64_t stored_cols = (trans == Trans::kNo ? cols : rows) + 3;
    data = Numbered<T>(stored_rows * stored_cols);
    view = MatrixView<T>{data.data(), stored_cols, trans};
  }
};

// `packed` holds `panels` panels of `depth` x `width`: element (p, j) of panel q at
// (q * depth + p) * width + j is at(q * width + j, p) for the `count` rows (PackA) or columns
// (PackB) that exist and zero past them; after the panels the canary value is untouched.
template <typename T, typename At>
void ExpectPanels(const std::vector<T>& packed, std::int64_t depth, int width,
                  std::int64_t count, At at) {
  const std::int64_t panels = (count + width - 1) / width;
  for (std::int64_t q = 0; q < panels; ++q) {
    for (std::int64_t p = 0; p < depth; ++p) {
      for (int j = 0; j < width; ++j) {
        const std::int64_t index = q * width + j;
        const T expected = index < count ? at(index, p) : T(0);
        ASSERT_EQ(packed[static_cast<std::size_t>((q * depth + p) * width + j)], expected)
            << "panel " << q << " k " << p << " lane " << j;
      }
    }
  }
  for (std::int64_t i = panels * width * depth; i < static_cast<std::int64_t>(packed.size());
       ++i) {
    ASSERT_EQ(packed[static_cast<std::size_t>(i)], T(-7)) << "written past the block at " << i;
  }
}

template <typename T>
std::vector<T> PanelBuffer(std::int64_t count, int width, std::int64_t depth) {
  const std::int64_t panels = (count + width - 1) / width;
  return std::vector<T>(static_cast<std::size_t>(panels * width * depth + kCanary), T(-7));
}

template <typename T>
void CheckPackA(Trans trans, int mr, std::int64_t rows, std::int64_t depth) {
  SCOPED_TRACE("trans " + std::to_string(trans == Trans::kYes) + " mr " + std::to_string(mr) +
               " rows " + std::to_string(rows) + " depth " + std::to_string(depth));
  const std::int64_t row0 = 2;
  const std::int64_t col0 = 5;
  const Source<T> a(row0 + rows, col0 + depth, trans);
  std::vector<T> packed = PanelBuffer<T>(rows, mr, depth);
  PackA(a.view, row0, rows, col0, depth, mr, 1, packed.data());
  ExpectPanels(packed, depth, mr, rows,
               [&](std::int64_t row, std::int64_t p) { return a.view.At(row0 + row, col0 + p); });
}

template <typename T>
void CheckPackB(Trans trans, int nr, std::int64_t depth, std::int64_t cols) {
  SCOPED_TRACE("trans " + std::to_string(trans == Trans::kYes) + " nr " + std::to_string(nr) +
               " depth " + std::to_string(depth) + " cols " + std::to_string(cols));
  const std::int64_t row0 = 3;
  const std::int64_t col0 = 1;
  const Source<T> b(row0 + depth, col0 + cols, trans);
  std::vector<T> packed = PanelBuffer<T>(cols, nr, depth);
  PackB(b.view, row0, depth, col0, cols, nr, 1, packed.data());
  ExpectPanels(packed, depth, nr, cols,
               [&](std::int64_t col, std::int64_t p) { return b.view.At(row0 + p, col0 + col); });
}

template <typename T>
void CheckAll() {
  for (Trans trans : {Trans::kNo, Trans::kYes}) {
    for (int mr : {1, 2, 3, 4, 6, 8, 14, 16}) {
      for (std::int64_t rows : {1, mr - 1, mr, 2 * mr + 1, 37}) {
        if (rows < 1) continue;
        for (std::int64_t depth : {0, 1, 3, 4, 5, 15, 16, 17, 100}) {
          CheckPackA<T>(trans, mr, rows, depth);
        }
      }
    }
    for (int nr : {1, 8, 16, 24, 48, 64}) {
      for (std::int64_t cols : {1, nr - 1, nr, 2 * nr + 3, 130}) {
        if (cols < 1) continue;
        // Depths around PackB's groups of 4 rows: short of one, whole groups, remainders.
        for (std::int64_t depth : {0, 1, 3, 4, 5, 8, 11, 17}) CheckPackB<T>(trans, nr, depth, cols);
      }
    }
  }
}

// Grouped panels (the low-precision layouts): value t of group g of line l of panel q at
// ((q * groups + g) * width + l) * group + t, k zero-filled up to `padded` (a multiple of the
// group, possibly several groups past the depth, as the AMX tile kernels take both panels).
template <typename T, typename At>
void ExpectGroupedPanels(const std::vector<T>& packed, std::int64_t padded, int width, int group,
                         std::int64_t count, std::int64_t depth, At at) {
  const std::int64_t panels = (count + width - 1) / width;
  const std::int64_t groups = padded / group;
  for (std::int64_t q = 0; q < panels; ++q) {
    for (std::int64_t g = 0; g < groups; ++g) {
      for (int l = 0; l < width; ++l) {
        for (int t = 0; t < group; ++t) {
          const std::int64_t line = q * width + l;
          const std::int64_t p = g * group + t;
          const T expected = line < count && p < depth ? at(line, p) : T(0);
          ASSERT_EQ(packed[static_cast<std::size_t>(((q * groups + g) * width + l) * group + t)],
                    expected)
              << "panel " << q << " group " << g << " line " << l << " value " << t;
        }
      }
    }
  }
  for (std::int64_t i = panels * width * padded; i < static_cast<std::int64_t>(packed.size());
       ++i) {
    ASSERT_EQ(packed[static_cast<std::size_t>(i)], T(-7)) << "written past the block at " << i;
  }
}

template <typename T>
void CheckGrouped(int group, std::int64_t pad_groups) {
  for (Trans trans : {Trans::kNo, Trans::kYes}) {
    // 24: whole vectors of interleaved columns, then single columns (8 bf16, 16 bytes each);
    // 14: lines in fours, then two alone. Row-major B's strips of whole 64-byte vectors (bf16
    // 32 and 64, bytes 64) take the wide interleaves where the CPU runs AVX-512
    // (packing_wide.h), a few whole panels at a time: 5 panels and a partial one.
    for (int width : {1, 3, 14, 16, 24, 32, 64}) {
      for (std::int64_t count : {std::int64_t{1}, std::int64_t{width} + 1, std::int64_t{37},
                                 std::int64_t{5} * width + 3}) {
        // 9 groups and a bit: k-contiguous lines transpose groups in fours, then one by one.
        for (std::int64_t depth : {std::int64_t{1}, std::int64_t{group} - 1, std::int64_t{group},
                                   std::int64_t{3 * group + 1}, std::int64_t{9 * group + 2}}) {
          if (depth < 1) continue;
          SCOPED_TRACE("group " + std::to_string(group) + " trans " +
                       std::to_string(trans == Trans::kYes) + " width " + std::to_string(width) +
                       " count " + std::to_string(count) + " depth " + std::to_string(depth));
          const std::int64_t padded = ((depth + group - 1) / group + pad_groups) * group;
          const std::int64_t row0 = 2;
          const std::int64_t col0 = 5;
          const Source<T> a(row0 + count, col0 + depth, trans);
          std::vector<T> packed = PanelBuffer<T>(count, width, padded);
          PackA(a.view, row0, count, col0, depth, width, group, packed.data(),
                pad_groups == 0 ? 0 : padded);
          ExpectGroupedPanels(packed, padded, width, group, count, depth,
                              [&](std::int64_t row, std::int64_t p) {
                                return a.view.At(row0 + row, col0 + p);
                              });
          const Source<T> b(row0 + depth, col0 + count, trans);
          packed = PanelBuffer<T>(count, width, padded);
          PackB(b.view, row0, depth, col0, count, width, group, packed.data(),
                pad_groups == 0 ? 0 : padded);
          ExpectGroupedPanels(packed, padded, width, group, count, depth,
                              [&](std::int64_t col, std::int64_t p) {
                                return b.view.At(row0 + p, col0 + col);
                              });
        }
      }
    }
  }
}

TEST(PackingTest, F32PanelsHoldOpOfTheBlockZeroPadded) { CheckAll<float>(); }
TEST(PackingTest, F64PanelsHoldOpOfTheBlockZeroPadded) { CheckAll<double>(); }

// The dot-product groups (bf16 pairs, byte quads), then the AMX tile rows (32 bf16, 64 bytes)
// with k padded two tile rows past the depth.
TEST(PackingTest, GroupedPanelsHoldOpOfTheBlockZeroPadded) {
  CheckGrouped<BFloat16>(2, 0);
  CheckGrouped<std::int8_t>(4, 0);
  CheckGrouped<std::uint8_t>(4, 1);
}

TEST(PackingTest, TileRowPanelsHoldOpOfTheBlockZeroPaddedToWholeRows) {
  CheckGrouped<BFloat16>(32, 0);
  CheckGrouped<BFloat16>(32, 2);
  CheckGrouped<std::uint8_t>(64, 0);
  CheckGrouped<std::uint8_t>(64, 2);
}

}  // namespace
}  // namespace mmtune
