// Looks kernels up in the per-ISA tables. Which tables exist is decided at build time: the x86
// ISA translation units are compiled only for x86-64 targets.
#include <map>

#include "kernels/kernel_tables.h"

namespace mmtune {

template <>
std::span<const MicroKernelEntry<float>> MicroKernels<float>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericF32MicroKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2F32MicroKernels();
    case IsaLevel::kAvx512: return Avx512F32MicroKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <>
std::span<const MicroKernelEntry<double>> MicroKernels<double>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericF64MicroKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2F64MicroKernels();
    case IsaLevel::kAvx512: return Avx512F64MicroKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <>
std::span<const GemvKernelEntry<float>> GemvKernels<float>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericF32GemvKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2F32GemvKernels();
    case IsaLevel::kAvx512: return Avx512F32GemvKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <>
std::span<const GemvKernelEntry<double>> GemvKernels<double>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericF64GemvKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2F64GemvKernels();
    case IsaLevel::kAvx512: return Avx512F64GemvKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <typename T>
const MicroKernelEntry<T>* FindMicroKernel(IsaLevel isa, int mr, int nr, int k_unroll) {
  for (const auto& entry : MicroKernels<T>(isa)) {
    if (entry.mr == mr && entry.nr == nr && entry.k_unroll == k_unroll) return &entry;
  }
  return nullptr;
}

template <typename T>
const GemvKernelEntry<T>* FindGemvKernel(IsaLevel isa, int mr, int nr) {
  for (const auto& entry : GemvKernels<T>(isa)) {
    if (entry.mr == mr && entry.nr == nr) return &entry;
  }
  return nullptr;
}

template const MicroKernelEntry<float>* FindMicroKernel<float>(IsaLevel, int, int, int);
template const MicroKernelEntry<double>* FindMicroKernel<double>(IsaLevel, int, int, int);
template const GemvKernelEntry<float>* FindGemvKernel<float>(IsaLevel, int, int);
template const GemvKernelEntry<double>* FindGemvKernel<double>(IsaLevel, int, int);

template <typename T>
const SnugTiles<T>& SnugTiles<T>::Of(const MicroKernelEntry<T>& kernel) {
  // One table per registered kernel, all built at the first call: a few thousand pointers.
  static const std::map<const MicroKernelEntry<T>*, SnugTiles> tables = [] {
    std::map<const MicroKernelEntry<T>*, SnugTiles> built;
    for (IsaLevel isa : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
      const auto kernels = MicroKernels<T>(isa);
      const int lanes = VectorLanes(isa, sizeof(T));
      for (const auto& outer : kernels) {
        SnugTiles& table = built[&outer];
        table.lanes_ = lanes;
        table.vectors_ = outer.nr / lanes;
        for (int m = 1; m <= outer.mr; ++m) {
          for (int v = 1; v <= table.vectors_; ++v) {
            const MicroKernelEntry<T>* snug = &outer;
            for (const auto& inner : kernels) {
              if (inner.k_unroll != outer.k_unroll || inner.mr < m || inner.mr > outer.mr ||
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

int VectorLanes(IsaLevel isa, std::size_t element_size) {
  switch (isa) {
    case IsaLevel::kGeneric: return static_cast<int>(16 / element_size);
    case IsaLevel::kAvx2: return static_cast<int>(32 / element_size);
    case IsaLevel::kAvx512: return static_cast<int>(64 / element_size);
  }
  return 1;
}

}  // namespace mmtune
