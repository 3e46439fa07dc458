// The registry tables: which register tiles exist for each ISA, written once as X-macro lists
// and instantiated by the per-ISA, per-dtype translation units (ukernels_<isa>_<dtype>.cc).
// A tile (MR, NV) is listed when MR * NV accumulators + NV B vectors + 1 A broadcast fit the
// ISA's vector registers; every tile comes with k unroll 1 and 4.
#pragma once

#include <span>

#include "kernels/microkernel.h"

// 16 vector registers (AVX2 ymm, SSE2-class generic).
#define MMTUNE_TILES_16_REGISTERS(X)                                                      \
  X(1, 1) X(2, 1) X(4, 1) X(6, 1) X(8, 1) X(12, 1) X(1, 2) X(2, 2) X(3, 2) X(4, 2) X(5, 2) \
  X(6, 2) X(1, 3) X(2, 3) X(3, 3) X(4, 3)

// 32 vector registers (AVX-512 zmm, NEON).
#define MMTUNE_TILES_32_REGISTERS(X)                                                        \
  X(1, 1) X(2, 1) X(4, 1) X(8, 1) X(12, 1) X(16, 1) X(24, 1) X(28, 1) X(1, 2) X(2, 2)       \
  X(4, 2) X(6, 2) X(8, 2) X(10, 2) X(12, 2) X(14, 2) X(1, 3) X(2, 3) X(4, 3) X(6, 3)        \
  X(8, 3) X(1, 4) X(2, 4) X(4, 4) X(6, 4)

// GEMV (rows streamed together, vectors per row step).
#define MMTUNE_GEMV_16_REGISTERS(X) \
  X(1, 1) X(1, 2) X(1, 4) X(2, 1) X(2, 2) X(2, 4) X(4, 1) X(4, 2) X(8, 1)
#define MMTUNE_GEMV_32_REGISTERS(X) MMTUNE_GEMV_16_REGISTERS(X) X(4, 4) X(8, 2)

#define MMTUNE_MICROKERNEL_ENTRIES(MR, NV) \
  ::mmtune::ukernel::Entry<Vec, MR, NV, 1>(), ::mmtune::ukernel::Entry<Vec, MR, NV, 4>(),
#define MMTUNE_GEMV_ENTRIES(R, NV) ::mmtune::ukernel::GemvEntry<Vec, R, NV>(),

// Defines `FUNCTION_PREFIX##MicroKernels()` and `FUNCTION_PREFIX##GemvKernels()` returning the
// tables for the traits type `Vec` (which must be in scope as `Vec`).
#define MMTUNE_DEFINE_KERNEL_TABLES(T, FUNCTION_PREFIX, TILES, GEMVS)                    \
  namespace {                                                                           \
  constexpr ::mmtune::MicroKernelEntry<T> kMicroKernels[] = {TILES(MMTUNE_MICROKERNEL_ENTRIES)}; \
  constexpr ::mmtune::GemvKernelEntry<T> kGemvKernels[] = {GEMVS(MMTUNE_GEMV_ENTRIES)};  \
  }                                                                                     \
  std::span<const ::mmtune::MicroKernelEntry<T>> FUNCTION_PREFIX##MicroKernels() {      \
    return kMicroKernels;                                                               \
  }                                                                                     \
  std::span<const ::mmtune::GemvKernelEntry<T>> FUNCTION_PREFIX##GemvKernels() {        \
    return kGemvKernels;                                                                \
  }

namespace mmtune {

std::span<const MicroKernelEntry<float>> GenericF32MicroKernels();
std::span<const GemvKernelEntry<float>> GenericF32GemvKernels();
std::span<const MicroKernelEntry<double>> GenericF64MicroKernels();
std::span<const GemvKernelEntry<double>> GenericF64GemvKernels();
std::span<const MicroKernelEntry<float>> Avx2F32MicroKernels();
std::span<const GemvKernelEntry<float>> Avx2F32GemvKernels();
std::span<const MicroKernelEntry<double>> Avx2F64MicroKernels();
std::span<const GemvKernelEntry<double>> Avx2F64GemvKernels();
std::span<const MicroKernelEntry<float>> Avx512F32MicroKernels();
std::span<const GemvKernelEntry<float>> Avx512F32GemvKernels();
std::span<const MicroKernelEntry<double>> Avx512F64MicroKernels();
std::span<const GemvKernelEntry<double>> Avx512F64GemvKernels();
std::span<const MicroKernelEntry<float>> NeonF32MicroKernels();
std::span<const GemvKernelEntry<float>> NeonF32GemvKernels();
std::span<const MicroKernelEntry<double>> NeonF64MicroKernels();
std::span<const GemvKernelEntry<double>> NeonF64GemvKernels();

}  // namespace mmtune
