// The registry: looks kernels up in the per-ISA tables of every GEMM. Which tables exist is
// decided at build time: the x86 ISA translation units are compiled only for x86-64 targets,
// the NEON ones only for aarch64.
#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <vector>

#include "kernels/kernel_tables.h"
#include "kernels/lowp_kernel_tables.h"
#include "machine/amx_permission.h"
#include "machine/cpu_features.h"

namespace mmtune {

namespace {

// A table function per ISA level, indexed by the level's value; null where this build has none.
static_assert([] {
  for (std::size_t i = 0; i < std::size(kIsaLevels); ++i) {
    if (static_cast<std::size_t>(kIsaLevels[i]) != i) return false;
  }
  return true;
}());
template <typename Entry>
using LevelTables = std::array<std::span<const Entry> (*)(), std::size(kIsaLevels)>;

template <typename Entry>
std::span<const Entry> ByIsa(IsaLevel isa, const LevelTables<Entry>& tables) {
  const auto table = tables[static_cast<std::size_t>(isa)];
  return table != nullptr ? table() : std::span<const Entry>();
}

// `Base`'s table as the kernels of `kLevel`: a level that adds no instruction a GEMM's kernels
// use runs the level below's kernels, compiled once, under its own name.
template <IsaLevel kLevel, typename Entry, std::span<const Entry> (*Base)()>
std::span<const Entry> Relabelled() {
  static const std::vector<Entry> table = [] {
    const std::span<const Entry> base = Base();
    std::vector<Entry> entries(base.begin(), base.end());
    for (Entry& entry : entries) entry.isa = kLevel;
    return entries;
  }();
  return table;
}

// The entries of `First` followed by those of `Second`: one level's vector and paired tiles.
template <typename Entry, std::span<const Entry> (*First)(), std::span<const Entry> (*Second)()>
std::span<const Entry> Joined() {
  static const std::vector<Entry> table = [] {
    std::vector<Entry> entries(First().begin(), First().end());
    entries.insert(entries.end(), Second().begin(), Second().end());
    return entries;
  }();
  return table;
}

}  // namespace

#if MMTUNE_X86_KERNELS
// At the AVX2 level, s8 runs VEX VPDPBUSD where the CPU has AVX-VNNI: one instruction per group
// and B vector instead of five, and the tiles that frees registers for.
namespace {
std::span<const LowpMicroKernelEntry<S8Gemm>> HostAvx2S8MicroKernels() {
  return HostCpuFeatures().avx_vnni ? AvxVnniS8MicroKernels() : Avx2S8MicroKernels();
}
std::span<const LowpGemvKernelEntry<S8Gemm>> HostAvx2S8GemvKernels() {
  return HostCpuFeatures().avx_vnni ? AvxVnniS8GemvKernels() : Avx2S8GemvKernels();
}
}  // namespace

#define MMTUNE_ISA_TABLES(X, NAME, KIND, AVX2, DOT, DOT_AS, BF16, BF16_AS)                 \
  {Generic##NAME##KIND##Kernels, AVX2##NAME##KIND##Kernels, Avx512##NAME##KIND##Kernels,   \
   nullptr, nullptr, nullptr}
#elif MMTUNE_NEON_KERNELS
// At the dot-product levels, s8 runs USDOT and USMMLA's paired tiles where the CPU has I8MM,
// else SDOT on A - 128; bf16 at neon-bf16 runs BFDOT and BFMMLA's paired tiles.
namespace {
std::span<const LowpMicroKernelEntry<S8Gemm>> HostDotS8MicroKernels() {
  return HostCpuFeatures().i8mm
             ? Joined<LowpMicroKernelEntry<S8Gemm>, UsdotS8MicroKernels, UsmmlaS8MicroKernels>()
             : SdotS8MicroKernels();
}
std::span<const LowpGemvKernelEntry<S8Gemm>> HostDotS8GemvKernels() {
  return HostCpuFeatures().i8mm ? UsdotS8GemvKernels() : SdotS8GemvKernels();
}
std::span<const LowpMicroKernelEntry<Bf16Gemm>> BfdotAndBfmmlaBf16MicroKernels() {
  return Joined<LowpMicroKernelEntry<Bf16Gemm>, BfdotBf16MicroKernels, BfmmlaBf16MicroKernels>();
}
std::span<const LowpGemvKernelEntry<Bf16Gemm>> BfdotAndBfmmlaBf16GemvKernels() {
  return BfdotBf16GemvKernels();
}
}  // namespace

// A NEON level's table: one compiled for the level, or a lower level's relabelled.
#define MMTUNE_OWN(LEVEL, X, KIND, TABLE) TABLE
#define MMTUNE_RELABELLED(LEVEL, X, KIND, TABLE) Relabelled<LEVEL, KernelEntries<X>::KIND, TABLE>
#define MMTUNE_ISA_TABLES(X, NAME, KIND, AVX2, DOT, DOT_AS, BF16, BF16_AS)                 \
  {Generic##NAME##KIND##Kernels, nullptr, nullptr, Neon##NAME##KIND##Kernels,              \
   DOT_AS(IsaLevel::kNeonDot, X, KIND, DOT##NAME##KIND##Kernels),                          \
   BF16_AS(IsaLevel::kNeonBf16, X, KIND, BF16##NAME##KIND##Kernels)}
#else
#define MMTUNE_ISA_TABLES(X, NAME, KIND, AVX2, DOT, DOT_AS, BF16, BF16_AS) \
  {Generic##NAME##KIND##Kernels, nullptr, nullptr, nullptr, nullptr, nullptr}
#endif

// The registry of GEMM X, whose per-ISA tables are named <Isa>NAME{Micro,Gemv}Kernels: the AVX2
// one <AVX2>NAME..., the neon one NeonNAME..., those of neon-dot and neon-bf16 <DOT>NAME... and
// <BF16>NAME..., each compiled for its level (MMTUNE_OWN) or a lower level's (MMTUNE_RELABELLED).
#define MMTUNE_REGISTRY(X, NAME, AVX2, DOT, DOT_AS, BF16, BF16_AS)                          \
  template <>                                                                          \
  std::span<const KernelEntries<X>::Micro> MicroKernels<X>(IsaLevel isa) {              \
    return ByIsa<KernelEntries<X>::Micro>(                                             \
        isa, MMTUNE_ISA_TABLES(X, NAME, Micro, AVX2, DOT, DOT_AS, BF16, BF16_AS));      \
  }                                                                                    \
  template <>                                                                          \
  std::span<const KernelEntries<X>::Gemv> GemvKernels<X>(IsaLevel isa) {                \
    return ByIsa<KernelEntries<X>::Gemv>(                                              \
        isa, MMTUNE_ISA_TABLES(X, NAME, Gemv, AVX2, DOT, DOT_AS, BF16, BF16_AS));       \
  }                                                                                    \
  template const KernelEntries<X>::Micro* FindMicroKernel<X>(IsaLevel, int, int, int); \
  template const KernelEntries<X>::Gemv* FindGemvKernel<X>(IsaLevel, int, int);

template <typename X>
const typename KernelEntries<X>::Micro* FindMicroKernel(IsaLevel isa, int mr, int nr,
                                                        int k_unroll) {
  for (const auto& entry : MicroKernels<X>(isa)) {
    if (entry.mr == mr && entry.nr == nr && entry.k_unroll == k_unroll) return &entry;
  }
  return nullptr;
}

template <typename X>
const typename KernelEntries<X>::Gemv* FindGemvKernel(IsaLevel isa, int mr, int nr) {
  for (const auto& entry : GemvKernels<X>(isa)) {
    if (entry.mr == mr && entry.nr == nr) return &entry;
  }
  return nullptr;
}

MMTUNE_REGISTRY(float, F32, Avx2, Neon, MMTUNE_RELABELLED, Neon, MMTUNE_RELABELLED)
MMTUNE_REGISTRY(double, F64, Avx2, Neon, MMTUNE_RELABELLED, Neon, MMTUNE_RELABELLED)
MMTUNE_REGISTRY(Bf16Gemm, Bf16, Avx2, Neon, MMTUNE_RELABELLED, BfdotAndBfmmla, MMTUNE_OWN)
MMTUNE_REGISTRY(S8Gemm, S8, HostAvx2, HostDot, MMTUNE_OWN, HostDot, MMTUNE_RELABELLED)
#undef MMTUNE_REGISTRY
#undef MMTUNE_ISA_TABLES
#undef MMTUNE_OWN
#undef MMTUNE_RELABELLED

bool BuildHasKernels(IsaLevel isa) { return !MicroKernels<float>(isa).empty(); }

template <>
bool CpuRunsLowp<Bf16Gemm>(const CpuFeatures& cpu, IsaLevel isa) {
  return isa != IsaLevel::kAvx512 || cpu.avx512_bf16;
}

template <>
bool CpuRunsLowp<S8Gemm>(const CpuFeatures& cpu, IsaLevel isa) {
  return isa != IsaLevel::kAvx512 || cpu.avx512_vnni;
}

template <>
bool CpuRunsLowpTiles<Bf16Gemm>(const CpuFeatures& cpu) {
  return cpu.amx_tile && cpu.amx_bf16 && RequestAmxTilePermission();
}

template <>
bool CpuRunsLowpTiles<S8Gemm>(const CpuFeatures& cpu) {
  return cpu.amx_tile && cpu.amx_int8 && RequestAmxTilePermission();
}

namespace {

// Whether `inner` reads the panels `outer` reads and writes its tile alike: the same k unroll,
// and for the low-precision kernels the same A group and the same kind of registers.
template <typename Entry>
bool RunsLike(const Entry& inner, const Entry& outer) {
  if (inner.k_unroll != outer.k_unroll) return false;
  if constexpr (requires { outer.a_group; }) {
    return inner.a_group == outer.a_group && inner.tiles == outer.tiles;
  }
  return true;
}

}  // namespace

template <typename X>
const SnugTiles<X>& SnugTiles<X>::Of(const Entry& kernel) {
  // One table per registered kernel, all built at the first call: a few thousand pointers.
  static const std::map<const Entry*, SnugTiles> tables = [] {
    std::map<const Entry*, SnugTiles> built;
    for (IsaLevel isa : kIsaLevels) {
      const auto kernels = MicroKernels<X>(isa);
      // A vector's columns: the narrowest tile's (every table lists one-vector tiles).
      int lanes = 0;
      for (const auto& entry : kernels) lanes = lanes == 0 ? entry.nr : std::min(lanes, entry.nr);
      for (const auto& outer : kernels) {
        SnugTiles& table = built[&outer];
        table.lanes_ = lanes;
        table.vectors_ = outer.nr / lanes;
        for (int m = 1; m <= outer.mr; ++m) {
          for (int v = 1; v <= table.vectors_; ++v) {
            const Entry* snug = &outer;
            for (const auto& inner : kernels) {
              if (!RunsLike(inner, outer) || inner.mr < m || inner.mr > outer.mr ||
                  inner.nr < v * lanes || inner.nr > outer.nr) {
                continue;
              }
              const int accumulators = inner.mr * inner.nr;
              const int best = snug->mr * snug->nr;
              if (accumulators < best || (accumulators == best && inner.mr < snug->mr)) {
                snug = &inner;
              }
            }
            table.by_shape_.push_back(snug);
          }
        }
      }
    }
    return built;
  }();
  return tables.at(&kernel);
}

template class SnugTiles<float>;
template class SnugTiles<double>;
template class SnugTiles<Bf16Gemm>;
template class SnugTiles<S8Gemm>;

int VectorLanes(IsaLevel isa, std::size_t element_size) {
  switch (isa) {
    case IsaLevel::kGeneric:
    case IsaLevel::kNeon:
    case IsaLevel::kNeonDot:
    case IsaLevel::kNeonBf16: return static_cast<int>(16 / element_size);
    case IsaLevel::kAvx2: return static_cast<int>(32 / element_size);
    case IsaLevel::kAvx512: return static_cast<int>(64 / element_size);
  }
  return 1;
}

}  // namespace mmtune
