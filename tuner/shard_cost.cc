#include "tuner/shard_cost.h"

#include <algorithm>

#include "machine/machine.h"
#include "search/space.h"

namespace mmtune {
namespace {

// 64 cores with private 32 KiB L1d and 1 MiB L2 and one shared 32 MiB L3, generic kernels only:
// the same description, and so the same spaces, in every build and on every host.
const Machine& ReferenceMachine() {
  static const Machine machine = [] {
    constexpr int kCores = 64;
    Topology topology;
    topology.packages = 1;
    topology.numa_nodes = 1;
    topology.cores = kCores;
    topology.pus = kCores;
    auto level = [&](int number, std::uint64_t bytes, bool shared) {
      CacheLevel cache;
      cache.level = number;
      cache.kind = number == 1 ? CacheKind::kData : CacheKind::kUnified;
      cache.size_bytes = bytes;
      cache.line_bytes = 64;
      if (shared) {
        cache.sharing.emplace_back();
        for (int core = 0; core < kCores; ++core) cache.sharing.back().push_back(core);
      } else {
        for (int core = 0; core < kCores; ++core) cache.sharing.push_back({core});
      }
      topology.caches.push_back(cache);
    };
    level(1, 32u << 10, false);
    level(2, 1u << 20, false);
    level(3, 32u << 20, true);
    return DescribeMachine(CpuFeatures{}, topology, IsaLevel::kGeneric);
  }();
  return machine;
}

}  // namespace

double EstimatedTuneCost(const Problem& problem) {
  constexpr double kFloorFlops = 2.0 * 32 * 32 * 32;
  const double flops = 2.0 * static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                       static_cast<double>(problem.k);
  const auto candidates = GenerateSpace(problem, ReferenceMachine()).size();
  return std::max(flops, kFloorFlops) * static_cast<double>(std::max<std::size_t>(1, candidates));
}

}  // namespace mmtune
