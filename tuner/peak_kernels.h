// The compute-peak and bandwidth loops available for each kernel ISA level. Each loop runs
// `iterations` times and returns the number of arithmetic operations it performed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "machine/cpu_features.h"

namespace mmtune {

using PeakLoop = double (*)(std::int64_t iterations);
// Sums `count` doubles (a multiple of 16, 64-byte aligned); memory-bound for large `count`.
using ReadLoop = double (*)(const double* data, std::size_t count);

struct PeakKernels {
  PeakLoop f32_fma = nullptr;
  PeakLoop f64_fma = nullptr;
  PeakLoop bf16_dot = nullptr;  // nullptr where the CPU has no bf16 dot-product instruction
  PeakLoop int8_dot = nullptr;  // nullptr where the CPU has no int8 dot-product instruction
  ReadLoop read_sum = nullptr;  // the widest loads of the level, as the GEMV kernels use
};

// The loops of `level`, restricted to what `cpu` can execute.
PeakKernels PeakKernelsFor(IsaLevel level, const CpuFeatures& cpu);

// Per-ISA tables, defined in peak_kernels_<isa>.cc.
PeakKernels PeakKernelsGeneric();
PeakKernels PeakKernelsAvx2(const CpuFeatures& cpu);
PeakKernels PeakKernelsAvx512(const CpuFeatures& cpu);
PeakLoop AvxVnniInt8Loop();  // call only where `CpuFeatures::avx_vnni` is set
PeakKernels PeakKernelsNeon(IsaLevel level);  // `level`: a NEON level the CPU runs
PeakLoop NeonSdotLoop();   // call only where `CpuFeatures::asimd_dot` is set
PeakLoop NeonBfdotLoop();  // call only where `CpuFeatures::arm_bf16` is set

}  // namespace mmtune
