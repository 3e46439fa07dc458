// B packed once, for GEMMs that reuse it (a layer's weights): op(B) of one K x N problem copied
// into the micro-panel order of one packed-family config, so that a GEMM with it skips B's
// packing and the barriers around it. Made by GemmPlan<X>::PackB, run by GemmPlan<X>::Run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/gemm_types.h"
#include "kernels/kernel_config.h"
#include "machine/machine.h"
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
  // Whether B of a problem in `layout` is packed as A panels (a_side).
  static constexpr bool ASideOf(Layout layout) {
    return !GemmTypes<X>::kLowPrecision && layout == Layout::kColMajor;
  }

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

// The configs that run GEMMs on the panels of one PackedB, and which of them runs a GEMM of a
// given M. Each is the packed-for config with the tile's free side (mr for B panels, nr for A
// panels) set to that of a registered kernel that reads the same panels (PackedFor) on this
// CPU, shorter than the tile's or, for vector tiles, longer, blocks kept multiples of it; and,
// where threads split the columns (jc) or the rows (ic) of a GEMM on B panels, with either
// split.
//
// M shorter than the packed-for tile runs the shortest kernel that covers it: a decode step
// (M = 1) computes one row of each tile, not mr. Longer M runs the vector tile the model ranks
// first by its cycles per k step (TileCyclesPerK) over the tiles M takes, its last partial one
// in the kernel of its rows (model::ComputedRows), other tiles charged kOtherTileCost more and
// taken only with twice the accumulators the FMA latency needs: on two zmm pipes 8 rows on 6x64
// panels run two four-row tiles rather than 6x64 and a starved 2x64, 12 rows on 8x32 panels
// 12x32, while M a multiple of the tile keeps it. Threads split the rows where M is at least
// half of N (each thread reads all of the panels once, where jc repeats A's packing on every
// thread) and gives each thread kMinIcTilesPerThread tiles, the columns elsewhere. AMX tile
// kernels (outside the model) keep the packed-for tile from its rows up, and its split
// (docs/runtime.md, Packed weights).
template <typename X>
class PanelConfigs {
 public:
  PanelConfigs(const PackedB<X>& packed, const Machine& machine);
  // The configs for the panels `config` packs of a K x N B (`a_side`: as a column-major f32 /
  // f64 problem's, see PackedB::a_side), with or without them at hand.
  PanelConfigs(const KernelConfig& config, std::int64_t n, bool a_side, const Machine& machine);
  // configs()[0] is the packed-for config.
  const std::vector<KernelConfig>& configs() const { return configs_; }
  // The index in configs() of the one that runs a GEMM of `rows` rows (M >= 1).
  std::size_t For(std::int64_t rows) const;

 private:
  struct Tile {
    int side = 0;         // mr (B panels) or nr (A panels)
    double cost = 0.0;    // cycles per k step of one tile, kOtherTileCost included
    // [r]: the same for a call's last r < side rows: a whole tile's, or on B panels (A packed
    // in the call) the cycles of the kernel of its rows (model::ComputedRows); [0] = 0.
    std::vector<double> partial_cost;
    bool roomy = false;   // enough accumulators to run calls longer than the packed-for tile
    std::size_t jc = 0;   // its configs() with threads splitting columns (or as packed for)
    std::size_t ic = 0;   // ... rows (== jc where the split stays)
  };
  std::vector<KernelConfig> configs_;
  std::vector<Tile> tiles_;  // tiles_[0]: the packed-for tile
  std::int64_t n_ = 0;
  int threads_ = 1;
  bool modelled_ = false;  // vector tiles (TileCyclesPerK); else AMX tiles
};

// The config that a GEMM of `problem` (dtype, layout, M and N) runs on the panels `packed_for`
// packs of its B: PanelConfigs' choice for M; `packed_for` itself where it is not of the packed
// family. For people and tools (`mmtune lookup --packed-b`).
KernelConfig PanelCallConfig(const KernelConfig& packed_for, const Problem& problem,
                             const Machine& machine);

extern template class PackedB<float>;
extern template class PackedB<double>;
extern template class PackedB<Bf16Gemm>;
extern template class PackedB<S8Gemm>;

}  // namespace mmtune
