// Fused epilogues (mmtune/types.h: Epilogue): a bias and an activation applied to each C tile
// right after its kernel wrote it, while the tile is in L1, so that no pass over C of its own
// follows the GEMM. One function per C element type and ISA level (epilogue_impl.h, compiled
// with that level's flags in epilogue_<isa>.cc), so that the activations run in its vectors.
#pragma once

#include <cstdint>

#include "machine/cpu_features.h"
#include "mmtune/types.h"

namespace mmtune {

// The m x n region of C at `c` (element (i, j) at c[i * row_stride + j * col_stride]) =
// act(C + bias), bias[j] for kPerColumn and bias[i] for kPerRow (already at the region's first
// column or row). s32 adds modulo 2^32 and knows only relu.
template <typename C>
using EpilogueFn = void (*)(C* c, std::int64_t row_stride, std::int64_t col_stride,
                            std::int64_t m, std::int64_t n, const C* bias, BiasKind bias_kind,
                            Activation activation);

// One ISA level's epilogue functions, one per C element type.
struct EpilogueEntry {
  EpilogueFn<float> f32;
  EpilogueFn<double> f64;
  EpilogueFn<std::int32_t> s32;
};

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
    fn_(c, row_stride, col_stride, m, n, bias, epilogue_.bias_kind, epilogue_.activation);
  }

 private:
  Epilogue<C> epilogue_;
  EpilogueFn<C> fn_ = nullptr;
};

}  // namespace mmtune
