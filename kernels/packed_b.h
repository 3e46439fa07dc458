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

// Immutable once made (move-only); any number of GEMMs may read one at once. Where the GEMM runs B as its
// row-major B (row-major problems, and every low-precision one) the panels are nr columns wide;
// a column-major f32 / f64 problem runs op(B) as its row-major A (see detail::RowMajorGemm), and
// the panels are then mr rows of that A. For each k block starting at pc, the block's panels
// lie in order at RoundUp(extent, panel) * pc.
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
  // Whether `config` reads these panels as they are: the same micro-kernel and k block.
  bool PackedFor(const KernelConfig& config) const;

 private:
  friend class GemmPlan<X>;
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

extern template class PackedB<float>;
extern template class PackedB<double>;
extern template class PackedB<Bf16Gemm>;
extern template class PackedB<S8Gemm>;

}  // namespace mmtune
