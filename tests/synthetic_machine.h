// Two-core machines described in code so tests do not depend on the host. Zen 3: AVX2, 32 KiB
// L1d, 512 KiB L2 per core, 32 MiB shared L3; `model` changes the fingerprint. Zen 4: the same
// with AVX-512 and a 1 MiB L2. Xeon: an Intel server core with two 512-bit FMA pipes, 48 KiB
// 12-way L1d, 2 MiB 16-way L2, 480 MiB shared L3 (as a KVM guest of a recent Xeon reports).
// Zen 5: two 512-bit FMA pipes like the Xeon, with a 1 MiB 8-way L2 and a private 508 MiB L3 per
// core (family 26; what the project's KVM guest reports).
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

inline Machine SyntheticZen4Machine() {
  Machine zen3 = SyntheticZen3Machine(17);
  Topology topology = zen3.topology;
  topology.caches[1].size_bytes = 1 << 20;  // the L2 (caches are listed L1d, L2, L3)
  CpuFeatures cpu = zen3.cpu;
  cpu.avx512f = cpu.avx512bw = cpu.avx512vl = cpu.avx512dq = true;
  return DescribeMachine(cpu, topology, std::nullopt);
}

inline Machine SyntheticXeonMachine() {
  const Machine zen4 = SyntheticZen4Machine();
  Topology topology = zen4.topology;
  topology.caches = {
      CacheLevel{1, CacheKind::kData, 49152, 64, 12, {{0}, {1}}},
      CacheLevel{2, CacheKind::kUnified, 2097152, 64, 16, {{0}, {1}}},
      CacheLevel{3, CacheKind::kUnified, 503316480, 64, 16, {{0, 1}}},
  };
  CpuFeatures cpu = zen4.cpu;
  cpu.vendor = "GenuineIntel";
  cpu.brand = "Intel Xeon (synthetic)";
  cpu.family = 6;
  cpu.model = 167;
  return DescribeMachine(cpu, topology, std::nullopt);
}

inline Machine SyntheticZen5Machine() {
  const Machine xeon = SyntheticXeonMachine();
  Topology topology = xeon.topology;
  topology.caches[1].size_bytes = 1 << 20;
  topology.caches[1].associativity = 8;
  topology.caches[2] = CacheLevel{3, CacheKind::kUnified, 532676608, 64, 0, {{0}, {1}}};
  CpuFeatures cpu = xeon.cpu;
  cpu.vendor = "AuthenticAMD";
  cpu.brand = "AMD EPYC (synthetic)";
  cpu.family = 26;
  cpu.model = 2;
  return DescribeMachine(cpu, topology, std::nullopt);
}

// `machine` with AVX512_BF16 and AVX512_VNNI, the dot products the synthetic AVX-512 machines
// above lack.
inline Machine WithDotProducts(const Machine& machine) {
  CpuFeatures cpu = machine.cpu;
  cpu.avx512_bf16 = cpu.avx512_vnni = true;
  return DescribeMachine(cpu, machine.topology, std::nullopt);
}

}  // namespace mmtune::testing
