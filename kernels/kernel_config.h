// One point of the kernel space: which family, which generated micro-kernel, how the loops
// around it are blocked for the caches, what is prefetched, and how many threads split which
// loop. A plain, trivially copyable struct; `Validate` says whether it can run a problem on a
// machine, and every config from outside (DB, JSON, user) is validated before use.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <nlohmann/json_fwd.hpp>

#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

enum class KernelFamily : std::uint8_t {
  kPacked,  // 5-loop (jc, pc, ic, jr, ir) with A and B packed into micro-panels
  kDirect,  // register tiles read A and B in place: no packing cost; small and medium matrices
  kGemv,    // M = 1 or N = 1: memory-bound matrix-vector product
};

// The loop whose iterations are split among threads.
enum class ParallelLoop : std::uint8_t {
  kJc,      // columns of C: threads share nothing (each packs its own A and B)
  kIc,      // rows of C: threads share the packed B block, each packs its A block
  kJr,      // micro-panels of B inside one block: threads share packed A and B
  kIcOwnB,  // "icown", rows of C sharing nothing: each thread packs all of B itself, and keeps
            // to rows of C of its own (under jc every row is split between the threads, whose
            // cores then fetch each other's lines of it: docs/low-precision.md)
};

// The order in which the direct family visits its register tiles (one k block at a time).
enum class TileOrder : std::uint8_t {
  kColumnPanels,  // a kc x nr panel of B at a time, every row tile of A over it: the panel is
                  // read from L1 by each row tile
  kRowPanels,     // an mr x kc panel of A at a time, across every column panel of B: A's panel
                  // stays in L1 and B streams row by row from L2, which helps where B's panel
                  // rows share few L1 sets (rows a multiple of 4 KiB apart)
};

const char* ToString(KernelFamily family);
const char* ToString(ParallelLoop loop);
const char* ToString(TileOrder order);
Result<KernelFamily> ParseKernelFamily(std::string_view text);
Result<ParallelLoop> ParseParallelLoop(std::string_view text);
Result<TileOrder> ParseTileOrder(std::string_view text);

struct KernelConfig {
  KernelFamily family = KernelFamily::kPacked;
  IsaLevel isa = IsaLevel::kGeneric;
  // Register tile (vector registers): mr rows x nr columns of C accumulate in registers; nr is a
  // multiple of the vector lanes. GEMV: mr rows of the streamed matrix per step, nr elements per
  // row step.
  int mr = 0;
  int nr = 0;
  int k_unroll = 1;  // micro-kernel k-loop unroll (instruction cache vs loop overhead)
  // Cache blocks (packed family; direct: kc only, 0 = the whole K in one pass; gemv: none):
  int kc = 0;  // packed: a kc x nr micro-panel of B streams from L2 across ir; direct: the k
               // block, so the m x kc block of A and the kc x nr panel of B stay in L2
  int mc = 0;  // L2: the packed mc x kc block of A stays in L2 across jr (multiple of mr)
  int nc = 0;  // L3: the packed kc x nc block of B stays in this core's L3 share (multiple of nr)
  int prefetch_a = 0;  // software prefetch distance in k iterations for A panels, 0 = off
  int prefetch_b = 0;  // same for B panels
  // Prefetch the C tile before each micro-kernel; AMX tile kernels, whose k loops are short,
  // prefetch the next tile's C during their k steps instead.
  bool prefetch_c = false;
  ParallelLoop parallel_loop = ParallelLoop::kJc;
  // Direct only: which panel stays in L1 while the other streams (L1 sets vs L2 bandwidth).
  TileOrder tile_order = TileOrder::kColumnPanels;
  // Packed bf16 / s8 only: read a k-contiguous A in place instead of packing its blocks (a
  // group of one row is already one 4-byte word, a run of a tile row 64 bytes of one row); edge
  // tiles and a k block ending inside a group (a run, for tile kernels) are still packed, as is
  // A where threads share its block (jr), and for tile kernels A whose rows do not start on
  // cache lines.
  bool a_in_place = false;
  // Packed AMX tile kernels only ("cbuf"): where K takes more than one k block, each thread's
  // tiles of C accumulate in a buffer of its own and only the last k block writes C. Under jc
  // both threads write every row of C, and a C tile stored by one k block and loaded by the next
  // is often in the other core's cache by then (docs/low-precision.md).
  bool c_buffer = false;
  int threads = 1;

  // Whether this config can compute `problem` on `machine`: the kernel exists for the dtype and
  // does not exceed the machine's kernel ISA level, blocks are positive multiples of the tile
  // and of sane size, the family fits the shape, threads <= cores. The error names the field.
  Status Validate(const Problem& problem, const Machine& machine) const;
  // The part of `Validate` that depends on neither the shape nor the machine: the kernel exists
  // for `dtype`, fields are in range, the family's fields are consistent. GEMM plans check it
  // once, when they are made. Asks the kernel registry (kernel_config_checks.cc).
  Status ValidateFor(DType dtype) const;
  // The part of `ValidateFor` that needs no kernel registry: fields in range and consistent
  // with the family and dtype (what a DB can check of a config it stores).
  Status ValidateFields(DType dtype) const;
  // Whether the family fits the shape (gemv needs M = 1 or N = 1).
  Status ValidateShape(std::int64_t m, std::int64_t n) const;
  // Whether a partial register tile at C's bottom edge (fewer than mr rows of the row-major
  // view) costs a whole one where the call packs A: direct low-precision tiles and AMX tile
  // kernels are padded; direct f32 / f64 and packed vector tiles run in a kernel of their rows
  // (SnugTiles). GEMV: no tiles. Asks the kernel registry (kernel_config_checks.cc).
  bool PadsPartialRows(DType dtype) const;
  // The same at C's right edge (fewer than nr columns): packed tiles, whose B panels are padded,
  // and direct low-precision ones.
  bool PadsPartialColumns(DType dtype) const {
    return family == KernelFamily::kPacked ||
           (family == KernelFamily::kDirect && IsLowPrecision(dtype));
  }
  // e.g. "packed avx2 6x16 ku4 mc120 kc256 nc4080 pf0/0/c jc t1"; a direct config visiting row
  // panels first says "rowpanels" before its loop: "direct avx512 6x64 ku1 pf0/0 rowpanels jc t1",
  // a packed one reading A in place "ainplace": "packed avx512 4x64 ku1 ... pf0/0/c ainplace jc t1"
  std::string ToString() const;

  friend bool operator==(const KernelConfig&, const KernelConfig&) = default;
};
static_assert(std::is_trivially_copyable_v<KernelConfig>);

void to_json(nlohmann::json& json, const KernelConfig& config);
// Never throws: missing fields, wrong types and unknown names become an error.
Result<KernelConfig> KernelConfigFromJson(const nlohmann::json& json);

// The inverse of KernelConfig::ToString, for configs named on a command line: "family isa MRxNR"
// first, then in any order `kuN`, `mcN`, `kcN`, `ncN`, `pfA/B` or `pfA/B/c`, `rowpanels` or
// `columnpanels` (the tile order), `ainplace`, `jc|ic|jr` and `tN`;
// a field left out keeps KernelConfig's default. Unknown or repeated words are an error that
// names the word. The result is not validated (KernelConfig::Validate does that per problem).
Result<KernelConfig> ParseKernelConfig(std::string_view text);

}  // namespace mmtune
