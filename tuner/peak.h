// Measured machine ceilings: arithmetic throughput per core and for all cores (f32/f64 FMA, bf16
// and int8 dot products where the CPU has them) at the kernel ISA level, and memory read
// bandwidth. Reports quote "% of measured peak" against these numbers, so each one is a median
// over several samples after a warm-up, with every thread pinned to its own core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "machine/machine.h"
#include "mmtune/result.h"
#include "tuner/core_calibration.h"

namespace mmtune {

struct PeakOptions {
  double sample_seconds = 0.02;  // length of one timed sample
  int warmup_samples = 2;        // untimed samples first: clocks ramp up, pages get mapped
  int samples = 7;               // the median of these is reported
  std::size_t bandwidth_bytes = 0;  // read buffer size; 0 = DefaultBandwidthBytes
};

struct Throughput {
  double one_core = 0.0;   // G operations (or GB) per second on one pinned thread
  double all_cores = 0.0;  // the same with one pinned thread on every core
};

// One point of the read-bandwidth sweep over working-set sizes (one core).
struct ReadSweepPoint {
  std::uint64_t bytes = 0;
  double gbs = 0.0;
};

struct PeakReport {
  IsaLevel isa = IsaLevel::kGeneric;
  int cores = 1;
  std::optional<Throughput> f32_fma;   // GFLOP/s
  std::optional<Throughput> f64_fma;   // GFLOP/s
  std::optional<Throughput> bf16_dot;  // GOP/s; absent where the CPU has no bf16 dot product
  std::optional<Throughput> int8_dot;  // GOP/s; absent where the CPU has no int8 dot product
  Throughput memory_read_gbs;          // GB/s (1e9 bytes)
  // One core's read bandwidth from the L2 size up, doubling, to half the memory buffer; and
  // the effective last-level cache it shows (EffectiveLlcBytes). hwloc's figure can be far off
  // in a virtual machine (a guest that lists a 508 MiB L3 streams 64 MiB at memory speed).
  std::vector<ReadSweepPoint> read_sweep;
  std::uint64_t effective_llc_bytes = 0;
  // With AVX-512 kernels: one core's f32 FMA rate with 256-bit vectors, and the 512-bit FMAs a
  // cycle it and f32_fma show (ZmmFmasPerCycle); 0 at other levels.
  double ymm_f32_fma_gflops = 0.0;
  double zmm_fmas_per_cycle = 0.0;
  // With two zmm pipes: the calibrated core facts (tuner/core_calibration.h); else empty.
  std::vector<CoreFactProbe> core_facts;
};

// The 512-bit FMAs a cycle of a core whose zmm and ymm f32 FMA loops ran at these rates: every
// x86 core listed completes two 256-bit FMAs a cycle, so the zmm rate over the ymm rate counts
// them, rounded to a whole pipe (1 or 2). 0 when either rate is not positive.
double ZmmFmasPerCycle(double zmm_gflops, double ymm_gflops);

// The largest working set of `sweep` (in order of size) up to which every point reads at least
// kCacheSpeedup times `memory_gbs`: what still comes from a cache. The first point (the L2 size)
// counts as cache whatever it reads. 0 for an empty sweep.
inline constexpr double kCacheSpeedup = 1.5;
std::uint64_t EffectiveLlcBytes(const std::vector<ReadSweepPoint>& sweep, double memory_gbs);

// Called before each measurement with a short description, e.g. "f32 FMA, 2 cores".
using PeakProgress = std::function<void(std::string_view)>;

// The read buffer of the bandwidth loop: 8x the last-level caches together (at least 256 MiB),
// so that the loop reads memory, but at most 1 GiB and an eighth of `physical_memory_bytes`
// (0: unknown), so that it never crowds the machine.
std::size_t DefaultBandwidthBytes(const Topology& topology, std::uint64_t physical_memory_bytes);

Result<PeakReport> MeasurePeaks(const Machine& machine, const PeakOptions& options,
                                const PeakProgress& progress = {});

void to_json(nlohmann::json& json, const PeakReport& report);

}  // namespace mmtune
