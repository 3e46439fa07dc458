// One description of "the machine we are on": CPU identity and features, topology, the kernel
// ISA levels, and the fingerprint that keys tuning results in the DB. The runtime needs this too,
// so it lives outside tuner/ and depends only on hwloc and CPUID.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

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

void to_json(nlohmann::json& json, const Machine& machine);

}  // namespace mmtune
