// Looks low-precision kernels up in the per-ISA tables (x86 tables only in x86-64 builds).
#include "kernels/lowp_kernel_tables.h"

namespace mmtune {

template <>
std::span<const LowpMicroKernelEntry<Bf16Gemm>> LowpMicroKernels<Bf16Gemm>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericBf16MicroKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2Bf16MicroKernels();
    case IsaLevel::kAvx512: return Avx512Bf16MicroKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <>
std::span<const LowpMicroKernelEntry<S8Gemm>> LowpMicroKernels<S8Gemm>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericS8MicroKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2S8MicroKernels();
    case IsaLevel::kAvx512: return Avx512S8MicroKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <>
std::span<const LowpGemvKernelEntry<Bf16Gemm>> LowpGemvKernels<Bf16Gemm>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericBf16GemvKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2Bf16GemvKernels();
    case IsaLevel::kAvx512: return Avx512Bf16GemvKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <>
std::span<const LowpGemvKernelEntry<S8Gemm>> LowpGemvKernels<S8Gemm>(IsaLevel isa) {
  switch (isa) {
    case IsaLevel::kGeneric: return GenericS8GemvKernels();
#if MMTUNE_X86_KERNELS
    case IsaLevel::kAvx2: return Avx2S8GemvKernels();
    case IsaLevel::kAvx512: return Avx512S8GemvKernels();
#else
    default: break;
#endif
  }
  return {};
}

template <class Kind>
const LowpGemvKernelEntry<Kind>* FindLowpGemvKernel(IsaLevel isa, int mr, int nr) {
  for (const auto& entry : LowpGemvKernels<Kind>(isa)) {
    if (entry.mr == mr && entry.nr == nr) return &entry;
  }
  return nullptr;
}

template <class Kind>
const LowpMicroKernelEntry<Kind>* FindLowpMicroKernel(IsaLevel isa, int mr, int nr,
                                                      int k_unroll) {
  for (const auto& entry : LowpMicroKernels<Kind>(isa)) {
    if (entry.mr == mr && entry.nr == nr && entry.k_unroll == k_unroll) return &entry;
  }
  return nullptr;
}

template <>
bool CpuRunsLowp<Bf16Gemm>(const CpuFeatures& cpu, IsaLevel isa) {
  return isa != IsaLevel::kAvx512 || cpu.avx512_bf16;
}

template <>
bool CpuRunsLowp<S8Gemm>(const CpuFeatures& cpu, IsaLevel isa) {
  return isa != IsaLevel::kAvx512 || cpu.avx512_vnni;
}

template const LowpMicroKernelEntry<Bf16Gemm>* FindLowpMicroKernel<Bf16Gemm>(IsaLevel, int, int,
                                                                             int);
template const LowpMicroKernelEntry<S8Gemm>* FindLowpMicroKernel<S8Gemm>(IsaLevel, int, int, int);
template const LowpGemvKernelEntry<Bf16Gemm>* FindLowpGemvKernel<Bf16Gemm>(IsaLevel, int, int);
template const LowpGemvKernelEntry<S8Gemm>* FindLowpGemvKernel<S8Gemm>(IsaLevel, int, int);

}  // namespace mmtune
