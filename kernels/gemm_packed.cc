// The packed family: the five loops around the micro-kernel, written once for every ISA and
// every GEMM (f32, f64, and bf16 / s8 with k packed in groups).
//
//   jc: nc columns of C/B      (B block kc x nc packed, lives in L3)
//    pc: kc of the k dimension  (first block applies beta, later ones accumulate)
//     ic: mc rows of C/A        (A block mc x kc packed, lives in L2)
//      jr: nr-column micro-panels of B (kc x nr, lives in L1)
//       ir: mr-row micro-panels of A -> micro-kernel on an mr x nr tile of C
//
// Threads split jc (nothing shared), ic (the packed B block is shared), jr (packed A and B are
// shared) or ic with each thread packing every B block itself (nothing shared). Members that
// share a packed block pack their share of its panels, then meet at a barrier before anyone
// reads it, and again before it is overwritten. An operand packed before the call (PackedB) is
// read in place: no packing, no barrier.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {
namespace {

// One tile call of X's micro-kernel. The f32 / f64 kernels take the operands' addresses as
// arguments (MicroKernelFn), write C rows with unit column stride and apply the epilogue to the
// tiles of the last k block in registers; the low-precision ones take everything in their
// argument struct and write C through both strides.
template <typename X, bool kLowPrecision = GemmTypes<X>::kLowPrecision>
class TileCall {
 public:
  using Types = GemmTypes<X>;
  // `partial_rows`: the kernels a tile of fewer rows than the kernel's runs in (null: the
  // kernel's own, on a padded panel).
  TileCall(const KernelConfig& config, const MicroKernelEntry<X>& kernel,
           const SnugTiles<X>* partial_rows, const RowMajorGemm<X>& g)
      : kernel_(kernel),
        partial_rows_(partial_rows),
        fn_(kernel.packed),
        finish_fn_(kernel.packed_epilogue),
        epilogue_(g.epilogue) {
    args_.alpha = g.alpha;
    args_.ldc = g.ldc;
    args_.prefetch_a = config.prefetch_a;
    args_.prefetch_b = config.prefetch_b;
    args_.prefetch_c = config.prefetch_c;
    args_.epilogue.bias_kind = g.epilogue.bias_kind;
    args_.epilogue.activation = g.epilogue.activation;
  }
  // A k block of `depth` elements (whole groups) per panel line; `beta` for its C tiles; the
  // last one finishes them (the epilogue).
  void SetBlock(std::int64_t depth, typename Types::Scalar beta, bool last) {
    args_.k = depth;
    args_.beta = beta;
    finishes_ = last && !epilogue_.Empty();
  }
  // The next tiles' columns: n of them from C's column `column` on.
  void SetColumns(int n, std::int64_t column) {
    args_.n = n;
    column_ = column;
  }
  // The tile of m rows from C's row `row` on, at `c` (a partial one's A panel is packed).
  void Run(const typename Types::A* a, const typename Types::B* b, typename Types::C* c, int m,
           std::int64_t row) {
    args_.m = m;
    MicroKernelFn<X> fn = fn_;
    MicroKernelFn<X> finish_fn = finish_fn_;
    if (m < kernel_.mr && partial_rows_ != nullptr) [[unlikely]] {
      const MicroKernelEntry<X>& snug = partial_rows_->For(m, kernel_.nr);
      fn = snug.packed;
      finish_fn = snug.packed_epilogue;
    }
    if (finishes_) [[unlikely]] {
      args_.epilogue.bias = BiasFrom(epilogue_, row, column_);
      finish_fn(a, b, c, args_);
      return;
    }
    fn(a, b, c, args_);
  }
  // The next tiles prefetch, at each k step, the line `elements` past B's into L2 (0: none).
  void SetNextPanel(std::int64_t elements) { args_.prefetch_next_panel = elements; }
  // 0: the next tiles read A's packed panels; else whole tiles of A in place, rows `stride`
  // apart, through the kernel's in-place rows mode reading B's packed panel (rows NR apart).
  void SetARowStride(std::int64_t stride) {
    args_.lda = stride;
    args_.ldb = kernel_.nr;
    fn_ = stride != 0 ? kernel_.rows : kernel_.packed;
    finish_fn_ = stride != 0 ? kernel_.rows_epilogue : kernel_.packed_epilogue;
  }
  void Enter() {}
  void Leave() {}

 private:
  const MicroKernelEntry<X>& kernel_;
  const SnugTiles<X>* partial_rows_;
  MicroKernelArgs<X> args_;
  MicroKernelFn<X> fn_;
  MicroKernelFn<X> finish_fn_;
  Epilogue<typename Types::C> epilogue_;
  bool finishes_ = false;
  std::int64_t column_ = 0;
};

template <typename X>
class TileCall<X, true> {
 public:
  using Types = GemmTypes<X>;
  // `partial_rows` as for f32 / f64; vector kernels only.
  TileCall(const KernelConfig& config, const LowpMicroKernelEntry<X>& kernel,
           const SnugTiles<X>* partial_rows, const RowMajorGemm<X>& g)
      : mr_(kernel.mr),
        nr_(kernel.nr),
        partial_rows_(partial_rows),
        fn_(kernel.packed),
        finish_fn_(FinishOf(kernel, g)),
        enter_(kernel.enter),
        leave_(kernel.leave),
        interleaves_epilogue_(kernel.tiles),
        epilogue_(g.epilogue, g.dequantize, config.isa),
        alpha_(g.alpha),
        c_row_stride_(g.ldc),
        c_col_stride_(g.c_col_stride) {
    args_.alpha = g.alpha;
    args_.row_stride = g.ldc;
    args_.col_stride = g.c_col_stride;
    args_.prefetch_a = config.prefetch_a;
    args_.prefetch_b = config.prefetch_b;
    args_.prefetch_c = config.prefetch_c;
    args_.epilogue.bias_kind = g.epilogue.bias_kind;
    args_.epilogue.activation = g.epilogue.activation;
    if (const DequantizeToF32* dequantize = epilogue_.dequantization()) {
      args_.dequantize.output.bias_kind = dequantize->output.bias_kind;
      args_.dequantize.output.activation = dequantize->output.activation;
    }
  }
  void SetBlock(std::int64_t depth, typename Types::Scalar beta, bool last) {
    args_.groups = depth / Types::kGroup;
    args_.beta = beta;
    finishes_ = last && epilogue_.Active();
  }
  // After SetBlock, where a thread's tiles accumulate in a buffer of sums (rows `stride` apart)
  // until the last k block: this block's tiles go to the buffer (`to_sums`: raw sums, the
  // first block's from zero) or, the last, to C from the buffer's sums.
  void SetSumsTarget(bool to_sums, std::int64_t stride, bool first) {
    args_.sums_row_stride = stride;
    to_sums_ = to_sums;
    from_sums_ = !to_sums;
    args_.row_stride = to_sums ? stride : c_row_stride_;
    args_.col_stride = to_sums ? 1 : c_col_stride_;
    args_.alpha = to_sums ? typename Types::Scalar(1) : alpha_;
    if (to_sums) args_.beta = first ? typename Types::Scalar(0) : typename Types::Scalar(1);
  }
  void SetColumns(int n, std::int64_t column) {
    args_.n = n;
    column_ = column;
  }
  // 0: the next tiles read A's packed panels; else A in place, rows `stride` apart.
  void SetARowStride(std::int64_t stride) { args_.a_row_stride = stride; }
  // The whole C tile that runs after the next tile, for it to prefetch; null: none.
  void SetNextC(const typename Types::C* next) { args_.next_c = next; }
  // The tile at `c` in C; `sums`: its place in the buffer of sums, where SetSumsTarget set one,
  // which it is written to instead of C until the last k block.
  void Run(const typename Types::A* a, const typename Types::B* b, typename Types::C* c, int m,
           std::int64_t row, typename Types::C* sums = nullptr) {
    args_.a = a;
    args_.b = b;
    args_.c = to_sums_ ? sums : c;
    args_.m = m;
    args_.sums = from_sums_ ? sums : nullptr;
    if (!finishes_ || !interleaves_epilogue_) [[likely]] {
      LowpMicroKernelFn<X> fn = fn_;
      LowpMicroKernelFn<X> finish_fn = finish_fn_;
      if (m < mr_ && partial_rows_ != nullptr) [[unlikely]] {
        const LowpMicroKernelEntry<X>& snug = partial_rows_->For(m, nr_);
        fn = snug.packed;
        finish_fn = finish_fn_ != nullptr ? snug.packed_epilogue : nullptr;
      }
      if (!finishes_) [[likely]] {
        fn(args_);
      } else if (finish_fn != nullptr) {
        if (const DequantizeToF32* dequantize = epilogue_.dequantization()) {
          args_.dequantize.scales = dequantize->column_scales + column_;
          args_.dequantize.offsets = dequantize->column_offsets + column_;
          args_.dequantize.output.bias = BiasFrom(dequantize->output, row, column_);
        } else {
          args_.epilogue.bias = BiasFrom(epilogue_.terms(), row, column_);
        }
        finish_fn(args_);
      } else {
        fn(args_);
        epilogue_.Apply(c, args_.row_stride, args_.col_stride, row, column_, m, args_.n);
      }
      return;
    }
    // A tile kernel keeps the vector units idle while the tile unit multiplies: the previous
    // tile's epilogue runs between this tile's k steps, and this tile's waits for the next.
    args_.interleave = pending_.m > 0 ? &ApplyPendingPart : nullptr;
    args_.interleave_context = this;
    fn_(args_);
    args_.interleave = nullptr;
    FinishPending();
    pending_ = {c, args_.row_stride, args_.col_stride, row, column_, m, args_.n, 0};
  }
  // Around a thread's tile calls: AMX kernels configure the tile registers once. Leave applies
  // the epilogue still pending.
  void Enter() {
    if (enter_ != nullptr) enter_();
  }
  void Leave() {
    FinishPending();
    if (leave_ != nullptr) leave_();
  }

 private:
  // A finished tile whose epilogue has yet to run; rows [0, done) have had it.
  struct PendingTile {
    typename Types::C* c = nullptr;
    std::int64_t row_stride = 0;
    std::int64_t col_stride = 0;
    std::int64_t row = 0;
    std::int64_t column = 0;
    int m = 0;
    int n = 0;
    int done = 0;
  };
  // The pending tile's rows up to part + 1 of `parts`.
  static void ApplyPendingPart(void* context, std::int64_t part, std::int64_t parts) {
    TileCall& call = *static_cast<TileCall*>(context);
    const int end = static_cast<int>((part + 1) * call.pending_.m / parts);
    if (end > call.pending_.done) call.ApplyPendingRows(end);
  }
  void ApplyPendingRows(int end) {
    PendingTile& tile = pending_;
    epilogue_.Apply(tile.c + tile.done * tile.row_stride, tile.row_stride, tile.col_stride,
                    tile.row + tile.done, tile.column, end - tile.done, tile.n);
    tile.done = end;
  }
  void FinishPending() {
    if (pending_.done < pending_.m) ApplyPendingRows(pending_.m);
    pending_ = {};
  }

  // The kernel's finishing entry: its epilogue in registers where it has one for this C.
  static LowpMicroKernelFn<X> FinishOf(const LowpMicroKernelEntry<X>& kernel,
                                       const RowMajorGemm<X>& g) {
    return std::is_same_v<typename Types::C, float> || g.dequantize != nullptr
               ? kernel.packed_epilogue
               : nullptr;
  }

  int mr_;
  int nr_;
  const SnugTiles<X>* partial_rows_;
  LowpMicroKernelArgs<X> args_;
  LowpMicroKernelFn<X> fn_;
  // Applies the epilogue (or the dequantization) in registers; null: epilogue_ after the kernel.
  LowpMicroKernelFn<X> finish_fn_;
  void (*enter_)();
  void (*leave_)();
  bool interleaves_epilogue_;
  PendingTile pending_;
  EpilogueCall<typename Types::C> epilogue_;
  bool finishes_ = false;
  std::int64_t column_ = 0;
  typename Types::Scalar alpha_;
  std::int64_t c_row_stride_;
  std::int64_t c_col_stride_;
  bool to_sums_ = false;
  bool from_sums_ = false;
};

}  // namespace

template <typename X>
bool RunPacked(const KernelConfig& config, const typename KernelsOf<X>::Micro& kernel,
               const SnugTiles<X>& snug, const RowMajorGemm<X>& g, ThreadPool& pool,
               const PrepackedOperands<X>& prepacked) {
  using A = typename GemmTypes<X>::A;
  using B = typename GemmTypes<X>::B;
  using C = typename GemmTypes<X>::C;
  using Scalar = typename GemmTypes<X>::Scalar;
  constexpr int G = GemmTypes<X>::kGroup;
  // Packed k runs in units of the A group (a multiple of G); config.kc is one of them.
  const int ag = AGroupOf<X>(kernel);
  const int mr = config.mr;
  const int nr = config.nr;
  // k blocks hold whole groups (config.kc is a multiple of the A group); only the last may end
  // in a partial group, which packing zero-fills.
  const std::int64_t kc = std::min<std::int64_t>(config.kc, RoundUp(g.k, ag));
  const std::int64_t mc = std::min<std::int64_t>(config.mc, RoundUp(g.m, mr));
  const std::int64_t nc = std::min<std::int64_t>(config.nc, RoundUp(g.n, nr));
  const int team = std::max(1, std::min(config.threads, pool.size()));
  const ParallelLoop loop = team > 1 ? config.parallel_loop : ParallelLoop::kJc;
  const bool share_b = loop == ParallelLoop::kIc || loop == ParallelLoop::kJr;
  const bool share_a = loop == ParallelLoop::kJr;
  const bool split_rows = loop == ParallelLoop::kIc || loop == ParallelLoop::kIcOwnB;
  const int members = share_b ? team : 1;
  // A prepacked operand needs neither scratch nor the barriers around its packing.
  const bool packs_a = prepacked.a == nullptr;
  const bool packs_b = prepacked.b == nullptr;
  const std::int64_t prepacked_a_rows = RoundUp(g.m, mr);
  // A config's kernel may read a row-major A in place: f32 / f64 whole tiles through the in-place
  // rows mode; a low-precision one where A's rows hold what a panel's would: whole units of the
  // kernel's A group (`ag`: 4-byte words for the vector kernels, 64-byte runs of a tile row for
  // the tile kernels), for tile kernels only where A's rows start on cache lines (a run across
  // two lines loads slower than packing it: docs/low-precision.md). Edge tiles and a k block
  // ending inside a unit are still packed. Not where threads share the packed A block (jr).
  bool a_in_place = config.a_in_place && packs_a && !share_a && g.a.trans == Trans::kNo;
  if constexpr (GemmTypes<X>::kLowPrecision) {
    const auto a_address = reinterpret_cast<std::uintptr_t>(g.a.data);
    const bool rows_on_lines = a_address % kCacheLineBytes == 0 &&
                               g.a.ld * std::int64_t{sizeof(A)} % kCacheLineBytes == 0;
    a_in_place = a_in_place && (rows_on_lines || !kernel.tiles);
  }
  const std::int64_t prepacked_b_columns = RoundUp(g.n, nr);
  // A prepacked B comes from L3 or memory, not from L2 as a block packed just before does, and
  // a panel's first tile would wait on it: the tiles of each panel prefetch the next panel into
  // L2 meanwhile, each tile one line of every `lines_per_step` its k loop steps over (one k
  // unroll of the panel), a different one per tile. The vector kernels only (the f32 / f64
  // TileCall): the tile kernels' k loops take no prefetch distance.
  const bool prefetch_next_panel = !packs_b;
  constexpr std::int64_t kLineElements = kCacheLineBytes / std::int64_t{sizeof(B)};
  const std::int64_t lines_per_step =
      std::max<std::int64_t>(1, std::int64_t{config.k_unroll} * nr / kLineElements);

  // Tile kernels with prefetch_c prefetch the next tile's C while their k steps run (their
  // own would come too late: a tile's k loop is short).
  bool prefetches_next_c = false;
  if constexpr (GemmTypes<X>::kLowPrecision) {
    prefetches_next_c = config.prefetch_c && kernel.tiles;
  }

  // Tile kernels with c_buffer: every k block but the last accumulates in the thread's buffer
  // of sums (all M rows by nc columns), so C is written once.
  bool use_sums = false;
  if constexpr (GemmTypes<X>::kLowPrecision) use_sums = config.c_buffer && kernel.tiles && g.k > kc;
  const std::int64_t sums_ld = RoundUp(nc, nr);
  const std::size_t sums_elements =
      use_sums ? static_cast<std::size_t>(RoundUp(g.m, mr) * sums_ld) : 0;

  const std::size_t a_elements = packs_a ? static_cast<std::size_t>(mc * kc) : 0;
  const std::size_t b_elements = packs_b ? static_cast<std::size_t>(RoundUp(nc, nr) * kc) : 0;
  const bool shares_packed_b = share_b && packs_b;
  const bool shares_packed_a = share_a && packs_a;
  B* shared_b =
      shares_packed_b ? ThreadWorkspaceOf<B>(WorkspaceSlot::kPackedB, b_elements) : nullptr;
  A* shared_a =
      shares_packed_a ? ThreadWorkspaceOf<A>(WorkspaceSlot::kPackedA, a_elements) : nullptr;
  if ((shares_packed_b && shared_b == nullptr) || (shares_packed_a && shared_a == nullptr)) {
    return false;
  }
  // A panel of fewer than mr rows of an A this call packs runs in the snug kernel of its rows
  // (SnugTiles), packed that tall: mr rows would spend whole-tile FMAs on zeros. Not for tile
  // kernels, nor for an A prepacked in mr-row panels.
  bool snug_rows = packs_a;
  if constexpr (GemmTypes<X>::kLowPrecision) snug_rows = packs_a && !kernel.tiles;
  const SnugTiles<X>* partial_rows = snug_rows ? &snug : nullptr;
  SpinBarrier barrier(members);
  TeamVote vote(team);
  const TileCall<X> base(config, kernel, partial_rows, g);

  // This thread's scratch: a block of B and of A to pack (or the team's shared block), its sums.
  struct Scratch {
    B* b = nullptr;
    A* a = nullptr;
    C* sums = nullptr;
    bool ok = false;
  };
  auto scratch_here = [&] {
    Scratch got;
    got.b = !packs_b ? nullptr
            : share_b ? shared_b
                      : ThreadWorkspaceOf<B>(WorkspaceSlot::kPackedB, b_elements);
    got.a = !packs_a ? nullptr
            : share_a ? shared_a
                      : ThreadWorkspaceOf<A>(WorkspaceSlot::kPackedA, a_elements);
    got.sums = use_sums ? ThreadWorkspaceOf<C>(WorkspaceSlot::kSums, sums_elements) : nullptr;
    got.ok = (!packs_b || got.b != nullptr) && (!packs_a || got.a != nullptr) &&
             (!use_sums || got.sums != nullptr);
    return got;
  };
  // Without a packed block shared between them the members share nothing.
  const bool independent = !shares_packed_b && !shares_packed_a;

  auto task = [&](int tid) -> bool {
    const int member = share_b ? tid : 0;
    std::int64_t col_begin = 0;
    std::int64_t col_end = g.n;
    if (loop == ParallelLoop::kJc && team > 1) {  // whole nr-panels per thread
      std::int64_t first = 0;
      std::int64_t last = 0;
      Partition(CeilDiv(g.n, nr), team, tid, &first, &last);
      col_begin = first * nr;
      col_end = std::min<std::int64_t>(last * nr, g.n);
    }
    const Scratch scratch = scratch_here();
    if (independent ? !scratch.ok : !vote.Agree(scratch.ok)) return false;
    B* const b_scratch = scratch.b;
    A* const a_scratch = scratch.a;
    C* const sums = scratch.sums;
    TileCall<X> tile = base;
    tile.Enter();

    for (std::int64_t jc = col_begin; jc < col_end; jc += nc) {
      const std::int64_t nb = std::min(nc, col_end - jc);
      const std::int64_t b_panels = CeilDiv(nb, nr);
      for (std::int64_t pc = 0; pc < g.k; pc += kc) {
        const std::int64_t kb = std::min(kc, g.k - pc);
        const std::int64_t depth = RoundUp(kb, ag);  // packed elements per panel line
        const bool last_block = pc + kb == g.k;
        tile.SetBlock(depth, pc == 0 || use_sums ? g.beta : Scalar(1), last_block);
        if constexpr (GemmTypes<X>::kLowPrecision) {
          if (use_sums) tile.SetSumsTarget(!last_block, sums_ld, pc == 0);
        }
        auto c_at = [&](std::int64_t q, std::int64_t row) {
          return g.c + (jc + q * nr) * g.c_col_stride + row * g.ldc;
        };
        // Tile (row, panel q) of this block, with its place in the buffer of sums if any.
        auto run_tile = [&](const A* a, const B* b_panel, std::int64_t q, std::int64_t row,
                            std::int64_t rows) {
          C* c_tile = c_at(q, row);
          const int m_tile = static_cast<int>(std::min<std::int64_t>(mr, rows));
          if constexpr (GemmTypes<X>::kLowPrecision) {
            tile.Run(a, b_panel, c_tile, m_tile, row,
                     use_sums ? sums + row * sums_ld + q * nr : nullptr);
          } else {
            tile.Run(a, b_panel, c_tile, m_tile, row);
          }
        };

        std::int64_t first = 0;
        std::int64_t last = 0;
        const B* packed_b = b_scratch;
        if (packs_b) {
          Partition(b_panels, members, member, &first, &last);
          if (first < last) {  // this member's panels of the block, in one pass over B's rows
            PackB(g.b, pc, kb, jc + first * nr, std::min(nb, last * nr) - first * nr, nr, G,
                  b_scratch + first * nr * depth, depth);
          }
          if (share_b) barrier.ArriveAndWait();
        } else {
          packed_b = prepacked.b + prepacked_b_columns * pc + jc * depth;
        }

        std::int64_t row_begin = 0;
        std::int64_t row_end = g.m;
        if (split_rows) {
          Partition(CeilDiv(g.m, mr), team, tid, &first, &last);
          row_begin = first * mr;
          row_end = std::min<std::int64_t>(last * mr, g.m);
        }
        const bool in_place = a_in_place && kb % ag == 0;
        // Packs `rows` of A from `row` on: whole mr-row panels, then the partial one's rows
        // as tall as its kernel's.
        auto pack_a = [&](std::int64_t row, std::int64_t rows, A* packed) {
          const std::int64_t whole = partial_rows != nullptr ? rows / mr * mr : rows;
          if (whole > 0) PackA(g.a, row, whole, pc, kb, mr, ag, packed, depth);
          if (whole < rows) {
            const int height = partial_rows->For(static_cast<int>(rows - whole), nr).mr;
            PackA(g.a, row + whole, rows - whole, pc, kb, height, ag, packed + whole * depth,
                  depth);
          }
        };
        for (std::int64_t ic = row_begin; ic < row_end; ic += mc) {
          const std::int64_t mb = std::min(mc, row_end - ic);
          const std::int64_t a_panels = CeilDiv(mb, mr);
          const std::int64_t whole_rows = in_place ? mb / mr * mr : 0;
          std::int64_t jr_first = 0;
          std::int64_t jr_last = b_panels;
          const A* packed_a = a_scratch;
          if (!packs_a) {
            packed_a = prepacked.a + prepacked_a_rows * pc + ic * depth;
          } else if (in_place) {
            if (whole_rows < mb) {  // the edge tile's rows, packed where its panel would lie
              pack_a(ic + whole_rows, mb - whole_rows, a_scratch + whole_rows * depth);
            }
          } else if (share_a) {
            Partition(a_panels, members, member, &first, &last);
            for (std::int64_t q = first; q < last; ++q) {
              pack_a(ic + q * mr, std::min<std::int64_t>(mr, mb - q * mr),
                     a_scratch + q * mr * depth);
            }
            barrier.ArriveAndWait();
          } else {
            pack_a(ic, mb, a_scratch);
          }
          if (share_a) Partition(b_panels, members, member, &jr_first, &jr_last);
          // Tile kernels with prefetch_c: the whole C tile after tile (ir, q) in the order
          // below, the one under it or the next panel's first; null where that is an edge tile
          // or there is none.
          auto whole_tile_after = [&](std::int64_t q, std::int64_t ir) -> const C* {
            if (!prefetches_next_c) return nullptr;
            if (ir + 2 * mr <= mb) return c_at(q, ic + ir + mr);
            if (q + 1 < jr_last && mb >= mr && nb - (q + 1) * nr >= nr) return c_at(q + 1, ic);
            return nullptr;
          };
          for (std::int64_t q = jr_first; q < jr_last; ++q) {
            const B* b_panel = packed_b + q * nr * depth;
            tile.SetColumns(static_cast<int>(std::min<std::int64_t>(nr, nb - q * nr)), jc + q * nr);
            std::int64_t ir = 0;
            if (whole_rows > 0) {
              tile.SetARowStride(g.a.ld);
              for (; ir < whole_rows; ir += mr) {
                if constexpr (GemmTypes<X>::kLowPrecision) tile.SetNextC(whole_tile_after(q, ir));
                run_tile(g.a.data + (ic + ir) * g.a.ld + pc, b_panel, q, ic + ir, mr);
              }
              tile.SetARowStride(0);
            }
            for (std::int64_t t = 0; ir < mb; ir += mr, ++t) {
              if constexpr (GemmTypes<X>::kLowPrecision) {
                tile.SetNextC(whole_tile_after(q, ir));
              } else if (prefetch_next_panel) {
                tile.SetNextPanel(q + 1 < jr_last ? nr * depth + t % lines_per_step * kLineElements
                                                  : 0);
              }
              run_tile(packed_a + ir * depth, b_panel, q, ic + ir, mb - ir);
            }
          }
          if (shares_packed_a) barrier.ArriveAndWait();  // before the A block is packed again
        }
        if (shares_packed_b) barrier.ArriveAndWait();  // before the B block is packed again
      }
    }
    tile.Leave();
    return true;
  };
  if (independent) {
    return RunIndependentShares(pool, team, [&](int) { return scratch_here().ok; }, task);
  }
  pool.Run(team, [&](int tid) { task(tid); });
  return !vote.failed();
}

#define MMTUNE_INSTANTIATE_RUN_PACKED(X)                                               \
  template bool RunPacked<X>(const KernelConfig&, const typename KernelsOf<X>::Micro&,    \
                             const SnugTiles<X>&, const RowMajorGemm<X>&, ThreadPool&,  \
                             const PrepackedOperands<X>&);
MMTUNE_INSTANTIATE_RUN_PACKED(float)
MMTUNE_INSTANTIATE_RUN_PACKED(double)
MMTUNE_INSTANTIATE_RUN_PACKED(Bf16Gemm)
MMTUNE_INSTANTIATE_RUN_PACKED(S8Gemm)
#undef MMTUNE_INSTANTIATE_RUN_PACKED

}  // namespace mmtune::detail
