// One description of "the machine we are on": CPU identity and features, topology, the kernel
// ISA levels, and the fingerprint that keys tuning results in the DB. The runtime needs this too,
// so it lives outside tuner/ and depends only on hwloc and CPUID.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "machine/core_facts.h"
#include "machine/cpu_features.h"
#include "machine/topology.h"
#include "mmtune/result.h"

namespace mmtune {

struct Machine {
  CpuFeatures cpu;
  Topology topology;
  IsaLevel max_isa = IsaLevel::kGeneric;       // what the CPU supports
  std::optional<IsaLevel> isa_cap;             // from MMTUNE_ISA, if set
  IsaLevel kernel_isa = IsaLevel::kGeneric;    // what the dispatcher uses: max_isa under the cap
  std::string fingerprint_basis;               // the text that is hashed, for people to read
  std::string fingerprint;                     // 16 hex digits
  // Measured with the peaks (tuner/peak.h: `mmtune info --measure` shows them, a tune stores
  // them with the machine in its DB), not part of the fingerprint; 0 where not measured
  // (TakeMeasuredFacts).
  // The last-level cache one core reads at cache speed: hwloc's figure can be far off in a
  // virtual machine, so the model asks this one whether data fits (CacheBudgetOf).
  std::uint64_t effective_llc_bytes = 0;
  // 512-bit FMAs one core completes per cycle (1 where it runs them as two 256-bit halves), from
  // its zmm and ymm f32 peaks; the model's core facts table answers where this is 0.
  double zmm_fmas_per_cycle = 0.0;
  // The core facts its calibration measured (machine/core_facts.h), in place of its core
  // family's row.
  MeasuredCoreFacts measured_facts;
};

// The fingerprint keys everything that decides kernel speed and nothing that does not: CPU vendor,
// family and model, the CPU's own ISA level (not the `MMTUNE_ISA` cap, which only selects
// kernels), core and package counts, and each data cache's size and sharing. Host name, clock
// readings, stepping and OS details stay out, so the same machine type gives the same fingerprint
// across runs, reboots and instances.
std::string FingerprintBasis(const CpuFeatures& cpu, const Topology& topology);
std::string FingerprintOf(const std::string& basis);

Machine DescribeMachine(const CpuFeatures& cpu, const Topology& topology,
                        std::optional<IsaLevel> isa_cap);

// The host, with `MMTUNE_ISA` applied. Fails when hwloc cannot read the topology or when
// `MMTUNE_ISA` holds something that is not a level.
Result<Machine> DetectHostMachine();

// The effective last-level cache of `peaks` (to_json(PeakReport), as the DB stores it), 0 where
// it holds none (null, or peaks from before the read sweep).
std::uint64_t EffectiveLlcBytesOf(const nlohmann::json& peaks);

// Gives `*machine` the facts its stored `peaks` measured (effective_llc_bytes,
// zmm_fmas_per_cycle: 1 or 2, the calibrated core facts), or none; a value out of range or of the
// wrong type counts as not measured.
void TakeMeasuredFacts(const nlohmann::json& peaks, Machine* machine);

// The last-level cache data fits in: the effective one where measured, else hwloc's (the size
// of one instance; 0 when the topology lists none).
std::uint64_t LastLevelCacheBytes(const Machine& machine);

// Facts stay out of the description: the DB keeps them with the peaks.
void to_json(nlohmann::json& json, const Machine& machine);

}  // namespace mmtune
