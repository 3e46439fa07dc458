// Packing for the low-precision GEMMs: like packing.h, with k grouped for the dot-product
// instructions (layout in lowp_microkernel.h). Rows, columns and k past the matrix edge are
// zero-filled, so the micro-kernel always runs whole tiles and whole groups.
#pragma once

#include <cstdint>

#include "kernels/packing.h"

namespace mmtune {

// Rows [row0, row0 + rows) x k [col0, col0 + depth) of op(A) into ceil(rows / mr) panels of
// ceil(depth / group) groups each.
template <typename T>
void PackAGrouped(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0,
                  std::int64_t depth, int mr, int group, T* packed);

// k [row0, row0 + depth) x columns [col0, col0 + cols) of op(B) into ceil(cols / nr) panels.
template <typename T>
void PackBGrouped(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0,
                  std::int64_t cols, int nr, int group, T* packed);

}  // namespace mmtune
