// Fused epilogues (mmtune/types.h: Epilogue): a bias and an activation applied to each C tile
// right after its kernel wrote it, while the tile is in L1, so that no pass over C of its own
// follows the GEMM. One function per C element type and ISA level (epilogue_impl.h, compiled
// with that level's flags in epilogue_<isa>.cc), so that the activations run in its vectors.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "machine/cpu_features.h"
#include "mmtune/types.h"

namespace mmtune {

// The m x n region of C at `c` (element (i, j) at c[i * row_stride + j * col_stride]) =
// act(C + bias) for one bias kind and activation: bias[j] for kPerColumn and bias[i] for
// kPerRow (already at the region's first column or row), none for kNone. s32 adds modulo 2^32.
template <typename C>
using EpilogueFn = void (*)(C* c, std::int64_t row_stride, std::int64_t col_stride,
                            std::int64_t m, std::int64_t n, const C* bias);

// For each bias kind and activation, by their enum values; null for an s32 gelu or silu.
template <typename C>
using EpilogueTable = std::array<std::array<EpilogueFn<C>, 4>, 3>;

// One ISA level's epilogue functions, a table per C element type. A tile's call goes straight
// to its function: tiles are small, and a dispatch inside each call costs more than relu.
struct EpilogueEntry {
  EpilogueTable<float> f32;
  EpilogueTable<double> f64;
  EpilogueTable<std::int32_t> s32;
};

template <typename C>
EpilogueFn<C> FindEpilogue(const EpilogueEntry& entry, BiasKind bias, Activation activation) {
  const auto row = static_cast<std::size_t>(bias);
  const auto column = static_cast<std::size_t>(activation);
  if constexpr (std::is_same_v<C, float>) return entry.f32[row][column];
  if constexpr (std::is_same_v<C, double>) return entry.f64[row][column];
  if constexpr (std::is_same_v<C, std::int32_t>) return entry.s32[row][column];
}

// Where an epilogue runs: whether `activation` exists for C elements of type C (s32: none and
// relu), and a problem's epilogue is well formed (a bias where one is asked for).
template <typename C>
Status CheckEpilogue(const Epilogue<C>& epilogue);

// The epilogue functions of `isa`, the generic ones where this build has none for it.
const EpilogueEntry& EpilogueKernels(IsaLevel isa);

// A problem's epilogue bound to the functions of one ISA level: what the drivers call on each
// finished region of C, given that region's first row and column. Inactive (Empty) where the
// problem has none.
template <typename C>
class EpilogueCall {
 public:
  EpilogueCall() = default;
  EpilogueCall(const Epilogue<C>& epilogue, IsaLevel isa);
  bool Active() const { return fn_ != nullptr; }
  void Apply(C* c, std::int64_t row_stride, std::int64_t col_stride, std::int64_t row,
             std::int64_t column, std::int64_t m, std::int64_t n) const {
    const C* bias = epilogue_.bias_kind == BiasKind::kPerColumn ? epilogue_.bias + column
                    : epilogue_.bias_kind == BiasKind::kPerRow  ? epilogue_.bias + row
                                                                : nullptr;
    fn_(c, row_stride, col_stride, m, n, bias);
  }

 private:
  Epilogue<C> epilogue_;
  EpilogueFn<C> fn_ = nullptr;
};

}  // namespace mmtune
