#include "comparison/summary_reporter.h"

#include <algorithm>
#include <cstdio>

namespace mmtune {
namespace {

// mmtune's own rows (comparison_bench.h): never the best peer.
bool IsOwnImpl(const std::string& impl) {
  return impl == "tuned" || impl == "default" || impl == "unpacked" || impl == "loop" ||
         impl == "plain" || impl == "separate";
}

std::optional<double> MedianOf(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::string Number(const char* format, double value) {
  char text[32];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

constexpr std::size_t kColumn = 10;

std::string RightAligned(const std::string& text) {
  return std::string(kColumn - std::min(kColumn - 1, text.size()), ' ') + text;
}

}  // namespace

SummaryReporter::SummaryReporter(std::vector<std::string> problem_keys, bool color)
    : ConsoleReporter(color ? OO_ColorTabular : OO_Tabular),
      problem_keys_(std::move(problem_keys)),
      impls_{"tuned", "default"} {}

void SummaryReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    const std::string& name = run.run_name.function_name;
    const std::size_t slash = name.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string key = name.substr(0, slash);
    const std::string impl = name.substr(slash + 1);
    if (std::find(impls_.begin(), impls_.end(), impl) == impls_.end()) impls_.push_back(impl);
    Timings& timings = timings_[key][impl];
    if (run.error_occurred) {
      timings.failed = true;
      continue;
    }
    const auto gflops = run.counters.find("gflops");
    if (gflops == run.counters.end()) continue;
    if (run.run_type == Run::RT_Aggregate) {
      if (run.aggregate_name == "median") timings.median = gflops->second.value;
    } else {
      timings.runs.push_back(gflops->second.value);
    }
  }
  ConsoleReporter::ReportRuns(runs);
}

void SummaryReporter::PrintSummary(std::ostream& out) const {
  std::size_t key_width = 8;
  for (const std::string& key : problem_keys_) key_width = std::max(key_width, key.size());
  const bool with_peers = std::any_of(impls_.begin(), impls_.end(), [](const std::string& impl) {
    return !IsOwnImpl(impl);
  });
  out << "\nsummary: median GFLOP/s";
  if (with_peers) out << "; tuned / best peer (> 1: mmtune is faster)";
  out << "\n" << std::string(key_width, ' ');
  for (const std::string& impl : impls_) out << RightAligned(impl);
  if (with_peers) out << "   tuned/best peer";
  out << "\n";
  for (const std::string& key : problem_keys_) {
    const auto found = timings_.find(key);
    if (found == timings_.end()) continue;
    out << key << std::string(key_width - key.size(), ' ');
    std::optional<double> tuned;
    std::optional<double> best_peer;
    std::string best_peer_name;
    for (const std::string& impl : impls_) {
      const auto it = found->second.find(impl);
      std::optional<double> value;
      std::string text = "-";
      // A failed repetition (an error or a wrong result) disqualifies the implementation.
      if (it != found->second.end() && it->second.failed) {
        text = "failed";
      } else if (it != found->second.end()) {
        value = it->second.median ? it->second.median : MedianOf(it->second.runs);
        if (value) text = Number("%.1f", *value);
      }
      out << RightAligned(text);
      if (!value) continue;
      if (impl == "tuned") tuned = value;
      if (!IsOwnImpl(impl) && (!best_peer || *value > *best_peer)) {
        best_peer = value;
        best_peer_name = impl;
      }
    }
    if (with_peers && tuned && best_peer && *best_peer > 0.0) {
      out << "   " << Number("%.2f", *tuned / *best_peer) << " vs " << best_peer_name;
    }
    out << "\n";
  }
}

}  // namespace mmtune
