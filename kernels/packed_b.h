// B packed once, for GEMMs that reuse it (a layer's weights): op(B) of one K x N problem copied
// into the micro-panel order of one packed-family config, so that a GEMM with it skips B's
// packing and the barriers around it. Made by GemmPlan<X>::PackB, run by GemmPlan<X>::Run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/gemm_types.h"
#include "kernels/kernel_config.h"
#include "mmtune/types.h"

namespace mmtune {

template <typename X>
class GemmPlan;

// Immutable once made (move-only); any number of GEMMs may read one at once. Where the GEMM
// runs B as its row-major B (row-major problems, and every low-precision one) the panels are nr
// columns wide; a column-major f32 / f64 problem runs op(B) as its row-major A (see
// detail::RowMajorGemm), and the panels are then mr rows of that A. For each k block starting
// at pc, the block's panels lie in order at RoundUp(extent, panel) * pc.
template <typename X>
class PackedB {
 public:
  using B = typename GemmTypes<X>::B;

  const KernelConfig& config() const { return config_; }
  Layout layout() const { return layout_; }
  Trans trans_b() const { return trans_b_; }
  std::int64_t k() const { return k_; }
  std::int64_t n() const { return n_; }
  // Packed elements (zero-padded panels and k groups included).
  std::int64_t size() const { return size_; }
  const B* data() const { return data_.get(); }
  // Whether `config` reads these panels as they are: the packed family at the same ISA, the
  // same panel width (nr; mr for A panels), k block and k run (AGroupOf). The tile's other
  // side, its k unroll, the other blocks, the loop and the threads are free.
  bool PackedFor(const KernelConfig& config) const;
  // Whether the panels are the row-major problem's A (column-major f32 / f64): then M of the
  // GEMM runs along the tile's nr, else along its mr.
  bool a_side() const { return a_side_; }

 private:
  friend class GemmPlan<X>;
  // PackedFor for a config whose kernel packs k in runs of `a_group`.
  bool Fits(const KernelConfig& config, int a_group) const;
  static constexpr std::size_t kAlignment = 64;
  struct Free {
    void operator()(B* p) const;
  };
  KernelConfig config_;
  Layout layout_ = Layout::kRowMajor;
  Trans trans_b_ = Trans::kNo;
  std::int64_t k_ = 0;
  std::int64_t n_ = 0;
  std::int64_t size_ = 0;
  int a_group_ = 1;       // k values per packed run (detail::AGroupOf)
  std::int64_t kc_ = 0;   // the k block the panels were cut in
  bool a_side_ = false;   // the panels are the row-major problem's A (mr rows)
  std::unique_ptr<B, Free> data_;  // 64-byte aligned
};

// The config that runs GEMMs of `rows` rows (M) on `packed` fastest by the tile: `packed`'s
// config with the tile's free side (mr for B panels, nr for A panels) cut to the smallest
// registered kernel that covers `rows` and reads the same panels (PackedFor) on this CPU, and
// blocks that stay multiples of it; the config itself where no such kernel is smaller. A
// decode step (M = 1) then computes one row of each tile, not mr.
template <typename X>
KernelConfig ShortTileConfig(const PackedB<X>& packed, std::int64_t rows);

extern template class PackedB<float>;
extern template class PackedB<double>;
extern template class PackedB<Bf16Gemm>;
extern template class PackedB<S8Gemm>;

}  // namespace mmtune
