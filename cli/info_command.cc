#include "cli/info_command.h"

#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command_helpers.h"
#include "machine/machine.h"
#include "machine/roofline.h"
#include "mmtune/version.h"
#include "tuner/peak.h"

namespace mmtune::cli {
namespace {

struct InfoOptions {
  bool json = false;
  bool measure = false;
};

std::string FormatBytes(std::uint64_t bytes) {
  std::ostringstream text;
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) {
    text << (bytes >> 20) << " MiB";
  } else if (bytes >= 1024 && bytes % 1024 == 0) {
    text << (bytes >> 10) << " KiB";
  } else {
    text << bytes << " B";
  }
  return text.str();
}

// "0-3" for a contiguous run of core indices, "0,2,5" otherwise.
std::string FormatCoreList(const std::vector<int>& cores) {
  if (cores.empty()) return "none";
  bool contiguous = true;
  for (std::size_t i = 1; i < cores.size(); ++i) contiguous &= cores[i] == cores[i - 1] + 1;
  if (contiguous && cores.size() > 1) {
    return std::to_string(cores.front()) + "-" + std::to_string(cores.back());
  }
  std::string text;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    text += (i == 0 ? "" : ",") + std::to_string(cores[i]);
  }
  return text;
}

std::string DescribeSharing(const CacheLevel& cache, int total_cores) {
  const int per_instance = cache.CoresPerInstance();
  if (per_instance <= 1) {
    return "private, " + std::to_string(cache.Instances()) + " instance" +
           (cache.Instances() == 1 ? "" : "s");
  }
  if (cache.Instances() == 1 && per_instance == total_cores) {
    return "shared by all " + std::to_string(total_cores) + " cores";
  }
  std::string text = "shared by " + std::to_string(per_instance) + " cores each (";
  for (int i = 0; i < cache.Instances(); ++i) {
    text += (i == 0 ? "" : ", ") + FormatCoreList(cache.sharing[static_cast<std::size_t>(i)]);
  }
  return text + ")";
}

std::string DescribeAssociativity(int ways) {
  if (ways < 0) return "fully associative";
  if (ways == 0) return "associativity unknown";
  return std::to_string(ways) + "-way";
}

void PrintMachine(std::ostream& out, const Machine& m) {
  const Topology& t = m.topology;
  out << "mmtune " << kVersion << " (" << kGitRevision << ")\n";
  out << "CPU          " << m.cpu.vendor << " " << (m.cpu.brand.empty() ? "?" : m.cpu.brand)
      << " (family " << m.cpu.family << ", model " << m.cpu.model << ", stepping "
      << m.cpu.stepping << ")\n";
  out << "Fingerprint  " << m.fingerprint << "  [" << m.fingerprint_basis << "]\n";
  out << "Topology     " << t.packages << (t.packages == 1 ? " package, " : " packages, ")
      << t.numa_nodes << (t.numa_nodes == 1 ? " NUMA node, " : " NUMA nodes, ") << t.cores
      << (t.cores == 1 ? " core, " : " cores, ") << t.pus
      << (t.pus == 1 ? " hardware thread\n" : " hardware threads\n");
  bool first = true;
  for (const CacheLevel& cache : t.caches) {
    out << (first ? "Caches       " : "             ") << std::left << std::setw(4)
        << cache.Name() << std::right << std::setw(8) << FormatBytes(cache.size_bytes) << "  "
        << (cache.line_bytes > 0 ? std::to_string(cache.line_bytes) + " B lines"
                                 : std::string("line size unknown"))
        << ", " << DescribeAssociativity(cache.associativity) << ", "
        << DescribeSharing(cache, t.cores) << "\n";
    first = false;
  }
  std::string present;
  std::string absent;
  for (const auto& [name, has] : m.cpu.FeatureList()) (has ? present : absent) += " " + name;
  out << "ISA          " << (present.empty() ? " (none of interest)" : present.substr(1)) << "\n";
  if (!absent.empty()) out << "  missing    " << absent.substr(1) << "\n";
  out << "Kernel ISA   " << ToString(m.kernel_isa) << " (CPU maximum " << ToString(m.max_isa);
  if (m.isa_cap) {
    out << ", capped by MMTUNE_ISA=" << ToString(*m.isa_cap) << ")\n";
  } else {
    out << "; MMTUNE_ISA not set)\n";
  }
}

void PrintPeaks(std::ostream& out, const PeakReport& r, const Topology& topology) {
  out << "\nMeasured peak (" << ToString(r.isa) << " kernels, pinned threads, median)\n";
  out << "                       1 core   " << r.cores << (r.cores == 1 ? " core\n" : " cores\n");
  auto row = [&](const char* name, const std::optional<Throughput>& t, const char* unit,
                 const char* missing) {
    out << "  " << std::left << std::setw(18) << name << std::right;
    if (!t) {
      out << missing << "\n";
      return;
    }
    out << std::fixed << std::setprecision(1) << std::setw(8) << t->one_core << std::setw(10)
        << t->all_cores << "  " << unit << "\n";
  };
  row("f32 FMA", r.f32_fma, "GFLOP/s", "n/a");
  row("f64 FMA", r.f64_fma, "GFLOP/s", "n/a");
  row("bf16 dot product", r.bf16_dot, "GOP/s", "  n/a (no avx512_bf16 at this ISA level)");
  row("int8 dot product", r.int8_dot, "GOP/s",
      "  n/a (no avx512_vnni / avx_vnni at this ISA level)");
  row("memory read", r.memory_read_gbs, "GB/s", "n/a");
  if (r.zmm_fmas_per_cycle > 0.0) {
    // One core only: it tells the zmm FMA pipes (tuner/peak.h, ZmmFmasPerCycle).
    out << "  " << std::left << std::setw(18) << "f32 FMA, 256-bit" << std::right << std::fixed
        << std::setprecision(1) << std::setw(8) << r.ymm_f32_fma_gflops << std::setw(10) << "-"
        << "  GFLOP/s: " << std::setprecision(0) << r.zmm_fmas_per_cycle
        << " zmm FMA(s) a cycle\n";
  }
  if (!r.core_facts.empty()) {
    // The A/Bs behind the model's core facts (tuner/core_calibration.h); "?": too close to the
    // threshold to tell, the core family's row decides.
    out << "\nCore facts (1 core, f32 kernel A/Bs: speed-up, threshold; ?: within " << std::fixed
        << std::setprecision(0) << kUndecidedBand * 100 << "% of it)\n";
    for (const CoreFactProbe& probe : r.core_facts) {
      out << "  " << std::left << std::setw(26) << probe.fact << std::right << std::setw(6)
          << (!probe.holds   ? "?"
              : *probe.holds ? "yes"
                             : "no")
          << std::fixed << std::setprecision(2) << std::setw(8) << probe.speedup
          << "x  >= " << probe.threshold << "x\n";
    }
  }
  if (!r.read_sweep.empty()) {
    out << "\nRead bandwidth by working set (1 core)\n";
    for (const ReadSweepPoint& point : r.read_sweep) {
      out << "  " << std::setw(9) << FormatBytes(point.bytes) << std::fixed
          << std::setprecision(1) << std::setw(10) << point.gbs << "  GB/s\n";
    }
    out << "  effective last-level cache " << FormatBytes(r.effective_llc_bytes)
        << " (read at >= " << kCacheSpeedup << "x memory's rate; hwloc lists "
        << FormatBytes(LastLevelCacheBytes(topology)) << ")\n";
  }
  out.unsetf(std::ios::floatfield);
}

void RunInfo(const InfoOptions& options, Context& context) {
  auto machine = DetectHostMachineOrFail(context);
  if (!machine) return;
  std::optional<PeakReport> peaks;
  if (options.measure) {
    // Progress goes to a terminal only, overwritten in place, so logs and pipes stay clean.
    const bool tty = isatty(fileno(stderr)) != 0;
    PeakProgress progress;
    if (tty) {
      progress = [&](std::string_view what) {
        *context.err << "\r\033[Kmeasuring " << what << " ..." << std::flush;
      };
    }
    auto report = MeasurePeaks(*machine, PeakOptions{}, progress);
    if (tty) *context.err << "\r\033[K" << std::flush;
    if (!report) {
      context.Fail(kExitFailure, report.error().message);
      return;
    }
    peaks = *report;
  }
  if (options.json) {
    nlohmann::json json = {{"schema_version", 1},
                           {"mmtune_version", kVersion},
                           {"git_revision", kGitRevision},
                           {"machine", *machine}};
    if (peaks) json["peaks"] = *peaks;
    *context.out << json.dump(2) << "\n";
    return;
  }
  PrintMachine(*context.out, *machine);
  if (peaks) PrintPeaks(*context.out, *peaks, machine->topology);
}

}  // namespace

void SetupInfoCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* info = app.add_subcommand(
      "info",
      "Describe this machine: topology and caches (hwloc), ISA features (CPUID), the kernel ISA "
      "level in use (capped by MMTUNE_ISA) and the machine fingerprint that "
      "keys tuning results.");
  info->add_flag("--json", options->json,
                 "Print machine-readable JSON (with schema_version) instead of text");
  info->add_flag("--measure", options->measure,
                 "Also measure peak FMA / dot-product throughput per core and for all cores, and "
                 "memory read bandwidth (takes a few seconds)");
  info->callback([options, &context]() { RunInfo(*options, context); });
}

}  // namespace mmtune::cli
