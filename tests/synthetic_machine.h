// A two-core AVX2 machine with Zen 3 caches (32 KiB L1d, 512 KiB L2 per core, 32 MiB shared
// L3), described in code so tests do not depend on the host. `model` changes the fingerprint.
#pragma once

#include <optional>

#include "machine/machine.h"

namespace mmtune::testing {

inline Machine SyntheticZen3Machine(int model = 1) {
  Topology topology;
  topology.packages = 1;
  topology.numa_nodes = 1;
  topology.cores = 2;
  topology.pus = 4;
  topology.caches = {
      CacheLevel{1, CacheKind::kData, 32768, 64, 8, {{0}, {1}}},
      CacheLevel{2, CacheKind::kUnified, 524288, 64, 8, {{0}, {1}}},
      CacheLevel{3, CacheKind::kUnified, 33554432, 64, 16, {{0, 1}}},
  };
  CpuFeatures cpu;
  cpu.vendor = "AuthenticAMD";
  cpu.brand = "AMD EPYC (synthetic)";
  cpu.family = 25;
  cpu.model = model;
  cpu.sse42 = cpu.avx = cpu.avx2 = cpu.fma = true;
  return DescribeMachine(cpu, topology, std::nullopt);
}

}  // namespace mmtune::testing
