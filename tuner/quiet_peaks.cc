#include "tuner/quiet_peaks.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace mmtune {
namespace {

struct CpuTimes {
  std::uint64_t busy = 0;
  std::uint64_t total = 0;
};

// The "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal ...; idle and
// iowait are the time nobody ran.
Result<CpuTimes> ReadCpuTimes() {
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!stat || !std::getline(stat, line) || line.rfind("cpu ", 0) != 0) {
    return MakeError(ErrorCode::kUnsupported, "cannot read /proc/stat");
  }
  std::istringstream fields(line.substr(4));
  CpuTimes times;
  std::uint64_t value = 0;
  for (int index = 0; fields >> value; ++index) {
    times.total += value;
    if (index != 3 && index != 4) times.busy += value;
  }
  if (times.total == 0) return MakeError(ErrorCode::kUnsupported, "empty /proc/stat cpu line");
  return times;
}

// Each stored "x_gflops"/"x_gops"/"x_gbs" entry's one_core and all_cores: taken from `fresh`
// where missing or beaten by more than `noise`. A stored report for another ISA level or core
// count is replaced whole.
nlohmann::json Merge(const nlohmann::json& stored, const nlohmann::json& fresh, double noise,
                     bool* changed) {
  if (!stored.is_object() || stored.value("isa", "") != fresh.value("isa", "") ||
      stored.value("cores", 0) != fresh.value("cores", 0)) {
    *changed = true;
    return fresh;
  }
  nlohmann::json merged = stored;
  for (const auto& [key, entry] : fresh.items()) {
    if (!entry.is_object()) {
      // The read sweep and the effective LLC: the latest measurement stands.
      if (!merged.contains(key) || merged[key] != entry) {
        merged[key] = entry;
        *changed = true;
      }
      continue;
    }
    nlohmann::json& kept = merged[key];
    if (!kept.is_object()) {
      kept = entry;
      *changed = true;
      continue;
    }
    for (const char* field : {"one_core", "all_cores"}) {
      const double now = entry.value(field, 0.0);
      if (!kept.contains(field) || !kept[field].is_number() ||
          now > kept[field].get<double>() * (1.0 + noise)) {
        kept[field] = now;
        *changed = true;
      }
    }
  }
  return merged;
}

}  // namespace

Result<double> BusyCores(double seconds) {
  auto before = ReadCpuTimes();
  if (!before) return before.error();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  auto after = ReadCpuTimes();
  if (!after) return after.error();
  const double total = static_cast<double>(after->total - before->total);
  if (total <= 0.0) return 0.0;
  const double cpus = static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
  return cpus * static_cast<double>(after->busy - before->busy) / total;
}

Result<QuietPeaks> MeasurePeaksWhenQuiet(const Machine& machine, const nlohmann::json& stored,
                                         const QuietPeakOptions& options) {
  auto busy_cores = options.busy_cores ? options.busy_cores : BusyCores;
  auto measure = options.measure ? options.measure
                                 : [](const Machine& m, const PeakOptions& o) {
                                     return MeasurePeaks(m, o);
                                   };
  QuietPeaks result;
  result.peaks = stored;
  // Where /proc/stat is unreadable nothing tells a busy machine from a quiet one: measure.
  auto quiet = [&]() -> std::pair<bool, double> {
    auto busy = busy_cores(options.sample_seconds);
    if (!busy) return {true, 0.0};
    return {*busy <= options.busy_limit, *busy};
  };
  auto busy_note = [](double busy) {
    std::ostringstream text;
    text.precision(2);
    text << busy;
    return text.str();
  };

  const bool have_stored = !stored.is_null();
  auto [quiet_before, busy_before] = quiet();
  const auto give_up_at = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(have_stored ? 0.0 : options.wait_seconds);
  while (!quiet_before && std::chrono::steady_clock::now() < give_up_at) {
    std::tie(quiet_before, busy_before) = quiet();
  }
  if (!quiet_before) {
    result.note = "peaks not measured: " + busy_note(busy_before) +
                  " cores busy with other work" +
                  (have_stored ? "; the stored peaks stay"
                               : "; % of peak stays unknown until a tune on a quiet machine");
    return result;
  }
  // Quiet before and after, or the measurement shared the machine: one more try when not.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto report = measure(machine, options.peak);
    if (!report) return report.error();
    auto [quiet_after, busy_after] = quiet();
    if (quiet_after) {
      nlohmann::json fresh = *report;
      result.peaks = Merge(stored, fresh, options.noise, &result.changed);
      result.note.clear();
      return result;
    }
    result.note = "peaks measured while " + busy_note(busy_after) +
                  " cores were busy with other work were discarded";
  }
  return result;
}

}  // namespace mmtune
