#include "machine/roofline.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "machine/machine.h"

namespace mmtune {
namespace {

double Ceiling(const nlohmann::json& peaks, const char* key, int threads) {
  if (!peaks.is_object()) return 0.0;
  const auto entry = peaks.find(key);
  if (entry == peaks.end() || !entry->is_object()) return 0.0;
  const double one = entry->value("one_core", 0.0);
  const double all = entry->value("all_cores", 0.0);
  const double scaled = one * std::max(1, threads);
  return all > 0.0 ? std::min(scaled, all) : scaled;
}

// The stored peak (tuner/peak.h) that bounds each dtype: FMA for f32/f64, the dot-product
// instructions for bf16 and int8. Where the CPU has no bf16 dot product the bf16 kernels widen to
// f32 and use FMA, so the f32 FMA peak bounds them; s8 without a dot product has no measured
// ceiling (its roofline is unknown).
const char* FallbackPeakKeyOf(DType dtype) {
  return dtype == DType::kBF16 ? "f32_fma_gflops" : nullptr;
}

const char* PeakKeyOf(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32_fma_gflops";
    case DType::kF64: return "f64_fma_gflops";
    case DType::kBF16: return "bf16_dot_gops";
    case DType::kS8: return "int8_dot_gops";
  }
  return "f32_fma_gflops";
}

}  // namespace

Roofline RooflineOf(const Problem& problem, const nlohmann::json& peaks,
                    std::uint64_t warm_cache_bytes) {
  Roofline roof;
  try {
    roof.compute_gflops = Ceiling(peaks, PeakKeyOf(problem.dtype), problem.threads);
    if (roof.compute_gflops == 0.0 && FallbackPeakKeyOf(problem.dtype) != nullptr) {
      roof.compute_gflops = Ceiling(peaks, FallbackPeakKeyOf(problem.dtype), problem.threads);
    }
    roof.bandwidth_gbs = Ceiling(peaks, "memory_read_gbs", problem.threads);
  } catch (const nlohmann::json::exception&) {
    return Roofline{};  // stored peaks of the wrong shape: unknown, not a crash
  }
  // Every item of a batch has operands of its own.
  const double bytes = static_cast<double>(problem.batch) * problem.OperandBytes();
  roof.intensity = bytes > 0.0 ? problem.Flops() / bytes : 0.0;
  roof.cache_resident = warm_cache_bytes > 0 && bytes <= static_cast<double>(warm_cache_bytes);
  if (roof.compute_gflops > 0.0 && roof.bandwidth_gbs > 0.0 && !roof.cache_resident) {
    roof.attainable_gflops = std::min(roof.compute_gflops, roof.intensity * roof.bandwidth_gbs);
  } else {
    roof.attainable_gflops = roof.compute_gflops;
  }
  return roof;
}

std::uint64_t LastLevelCacheBytes(const Topology& topology) {
  std::uint64_t bytes = 0;
  int level = 0;
  for (const CacheLevel& cache : topology.caches) {
    if (cache.kind != CacheKind::kInstruction && cache.level > level) {
      level = cache.level;
      bytes = cache.size_bytes;
    }
  }
  return bytes;
}

std::uint64_t WarmCacheBytes(const Topology& topology, const nlohmann::json& peaks) {
  const std::uint64_t effective = EffectiveLlcBytesOf(peaks);
  return effective > 0 ? effective : LastLevelCacheBytes(topology);
}

}  // namespace mmtune
