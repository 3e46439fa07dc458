#include "machine/machine.h"

#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "machine/roofline.h"

namespace mmtune {

std::string FingerprintBasis(const CpuFeatures& cpu, const Topology& topology) {
  std::string basis = "vendor=" + cpu.vendor + ";family=" + std::to_string(cpu.family) +
                      ";model=" + std::to_string(cpu.model) +
                      ";isa=" + ToString(cpu.MaxIsaLevel());
  // ARM cores of one part differ in their optional extensions (SVE, bf16, i8mm) more than x86
  // models do; x86 bases stay as they were, so that their DBs keep their winners.
  if (cpu.arch == CpuArch::kArm64) {
    std::string features;
    for (const auto& [name, present] : cpu.FeatureList()) {
      if (present) features += (features.empty() ? "" : ",") + name;
    }
    basis += ";features=" + features;
  }
  basis += ";packages=" + std::to_string(topology.packages) +
           ";cores=" + std::to_string(topology.cores);
  for (const CacheLevel& cache : topology.caches) {
    if (cache.kind == CacheKind::kInstruction) continue;
    basis += ";" + cache.Name() + "=" + std::to_string(cache.size_bytes) + "/" +
             std::to_string(cache.CoresPerInstance());
  }
  return basis;
}

std::string FingerprintOf(const std::string& basis) {
  // 64-bit FNV-1a: tiny, specified exactly, and identical on every platform and compiler, which
  // is all a DB key needs (it is not a security boundary).
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : basis) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, hash);
  return text;
}

Machine DescribeMachine(const CpuFeatures& cpu, const Topology& topology,
                        std::optional<IsaLevel> isa_cap) {
  Machine machine;
  machine.cpu = cpu;
  machine.topology = topology;
  machine.max_isa = cpu.MaxIsaLevel();
  machine.isa_cap = isa_cap;
  machine.kernel_isa = DispatchIsaLevel(machine.max_isa, isa_cap);
  machine.fingerprint_basis = FingerprintBasis(cpu, topology);
  machine.fingerprint = FingerprintOf(machine.fingerprint_basis);
  return machine;
}

Result<Machine> DetectHostMachine() {
  auto cap = IsaCapFromEnvironment();
  if (!cap) return cap.error();
  auto topology = LoadHostTopology();
  if (!topology) return topology.error();
  return DescribeMachine(HostCpuFeatures(), *topology, *cap);
}

std::uint64_t EffectiveLlcBytesOf(const nlohmann::json& peaks) {
  if (!peaks.is_object()) return 0;
  const auto effective = peaks.find("effective_llc_bytes");
  return effective != peaks.end() && effective->is_number_unsigned()
             ? effective->get<std::uint64_t>()
             : 0;
}

void TakeMeasuredFacts(const nlohmann::json& peaks, Machine* machine) {
  machine->effective_llc_bytes = EffectiveLlcBytesOf(peaks);
  machine->zmm_fmas_per_cycle = 0.0;
  machine->measured_facts = MeasuredCoreFacts{};
  if (!peaks.is_object()) return;
  const auto zmm = peaks.find("zmm_fmas_per_cycle");
  if (zmm != peaks.end() && zmm->is_number()) {
    const double pipes = zmm->get<double>();
    if (pipes == 1.0 || pipes == 2.0) machine->zmm_fmas_per_cycle = pipes;
  }
  const auto facts = peaks.find("core_facts");
  if (facts == peaks.end() || !facts->is_object()) return;
  for (const MeasuredCoreFactField& field : kMeasuredCoreFactFields) {
    const auto probe = facts->find(std::string(field.name));
    if (probe == facts->end() || !probe->is_object()) continue;
    const auto holds = probe->find("holds");
    if (holds != probe->end() && holds->is_boolean()) {
      machine->measured_facts.*field.measured = holds->get<bool>();
    }
  }
}

std::uint64_t LastLevelCacheBytes(const Machine& machine) {
  return machine.effective_llc_bytes > 0 ? machine.effective_llc_bytes
                                         : LastLevelCacheBytes(machine.topology);
}

void to_json(nlohmann::json& json, const Machine& m) {
  nlohmann::json features = nlohmann::json::object();
  for (const auto& [name, present] : m.cpu.FeatureList()) features[name] = present;
  json = {
      {"fingerprint", m.fingerprint},
      {"fingerprint_basis", m.fingerprint_basis},
      {"cpu",
       {{"vendor", m.cpu.vendor},
        {"brand", m.cpu.brand},
        {"family", m.cpu.family},
        {"model", m.cpu.model},
        {"stepping", m.cpu.stepping}}},
      {"isa",
       {{"features", features},
        {"max_level", ToString(m.max_isa)},
        {"cap", m.isa_cap ? nlohmann::json(ToString(*m.isa_cap)) : nlohmann::json(nullptr)},
        {"kernel_level", ToString(m.kernel_isa)}}},
      {"topology", m.topology},
  };
}

}  // namespace mmtune
