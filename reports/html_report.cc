#include "reports/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/embedded_assets.h"
#include "reports/html_escape.h"
#include "reports/json_report.h"

namespace mmtune {
namespace {

using nlohmann::json;

// The page may run inline scripts and styles of its own and load nothing at all: a report must
// open offline, and a hostile string that slipped through escaping still could not fetch.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

// Runs first in <body>, before Chart.js: any error of the page (a script that fails to parse,
// an exception while drawing, console.error) is counted in `data-report-errors` and listed on the
// page, where a person and the headless-browser test see it.
constexpr const char* kErrorCapture = R"js(
(function () {
  var count = 0;
  function note(message) {
    count += 1;
    document.body.setAttribute('data-report-errors', String(count));
    var item = document.createElement('li');
    item.textContent = 'page error: ' + String(message);
    document.getElementById('report-errors').appendChild(item);
  }
  window.addEventListener('error', function (event) { note(event.message || 'error'); });
  window.addEventListener('unhandledrejection', function (event) {
    note('unhandled rejection: ' + event.reason);
  });
  var original = console.error;
  console.error = function () {
    note(Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
})();
)js";

std::string Esc(std::string_view text) { return HtmlEscape(text); }

std::string Fixed(double value, int precision) {
  if (!std::isfinite(value)) return "n/a";
  std::ostringstream text;
  text << std::fixed << std::setprecision(precision) << value;
  return text.str();
}

std::string Optional(const std::optional<double>& value, int precision,
                     const std::string& suffix = "") {
  return value ? Fixed(*value, precision) + suffix : "n/a";
}

// A `data-value` for sorting: the number as the script parses it, empty when unknown.
std::string SortValue(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return "";
  std::ostringstream text;
  text << std::setprecision(10) << *value;
  return text.str();
}

// ---- Reading the stored machine description, which may be any JSON at all. ----

const json* Child(const json* parent, const char* key) {
  if (parent == nullptr || !parent->is_object()) return nullptr;
  const auto it = parent->find(key);
  return it == parent->end() ? nullptr : &*it;
}

std::string Scalar(const json* value) {
  if (value == nullptr) return "";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_boolean()) return value->get<bool>() ? "yes" : "no";
  if (value->is_number()) return value->dump();
  return "";
}

std::string Bytes(const json* value) {
  if (value == nullptr || !value->is_number_integer()) return "?";
  const std::int64_t bytes = value->get<std::int64_t>();
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string CachesText(const json* topology) {
  const json* caches = Child(topology, "caches");
  if (caches == nullptr || !caches->is_array() || caches->empty()) return "unknown";
  std::string text;
  for (const json& cache : *caches) {
    if (!text.empty()) text += "; ";
    text += Scalar(Child(&cache, "name")) + " " + Bytes(Child(&cache, "size_bytes")) + " x" +
            Scalar(Child(&cache, "instances"));
    const std::string ways = Scalar(Child(&cache, "associativity"));
    if (!ways.empty() && ways != "0") {
      text += ways == "-1" ? ", fully assoc." : ", " + ways + "-way";
    }
  }
  return text;
}

std::string FeaturesText(const json* isa) {
  const json* features = Child(isa, "features");
  if (features == nullptr || !features->is_object()) return "unknown";
  std::string text;
  for (const auto& [name, present] : features->items()) {
    if (present == true) text += (text.empty() ? "" : " ") + name;
  }
  return text.empty() ? "none" : text;
}

std::string ThroughputText(const json& peaks, const char* key, const char* unit) {
  const json* entry = Child(&peaks, key);
  if (entry == nullptr || !entry->is_object()) return "n/a";
  const json* one = Child(entry, "one_core");
  const json* all = Child(entry, "all_cores");
  const auto number = [](const json* value) {
    return value != nullptr && value->is_number() ? Fixed(value->get<double>(), 1) : "?";
  };
  return number(one) + " " + unit + " on 1 core, " + number(all) + " on all cores";
}

void Row(std::ostream& out, const std::string& name, const std::string& escaped_value) {
  out << "<dt>" << name << "</dt><dd>" << escaped_value << "</dd>\n";
}

void WriteMachine(std::ostream& out, const ReportMachine& machine) {
  const json* description = &machine.description;
  const json* cpu = Child(description, "cpu");
  const json* isa = Child(description, "isa");
  const json* topology = Child(description, "topology");
  const std::string brand = Scalar(Child(cpu, "brand"));
  out << "<article class=\"machine\" data-fingerprint=\"" << Esc(machine.fingerprint) << "\">\n"
      << "<h3>" << Esc(brand.empty() ? "unknown CPU" : brand) << "</h3>\n<dl>\n";
  Row(out, "CPU", Esc(Scalar(Child(cpu, "vendor")) + ", family " + Scalar(Child(cpu, "family")) +
                      " model " + Scalar(Child(cpu, "model")) + " stepping " +
                      Scalar(Child(cpu, "stepping"))));
  std::string level = Scalar(Child(isa, "kernel_level"));
  const std::string cap = Scalar(Child(isa, "cap"));
  level += " (CPU: " + Scalar(Child(isa, "max_level")) +
           (cap.empty() ? std::string(")") : ", capped by MMTUNE_ISA=" + cap + ")");
  Row(out, "kernel ISA", Esc(level));
  Row(out, "ISA features", Esc(FeaturesText(isa)));
  Row(out, "topology",
      Esc(Scalar(Child(topology, "packages")) + " package(s), " +
          Scalar(Child(topology, "numa_nodes")) + " NUMA node(s), " +
          Scalar(Child(topology, "cores")) + " cores, " + Scalar(Child(topology, "pus")) +
          " hardware threads"));
  Row(out, "caches", Esc(CachesText(topology)));
  Row(out, "fingerprint", "<code>" + Esc(machine.fingerprint) + "</code>");
  Row(out, "fingerprint basis", "<code>" + Esc(machine.fingerprint_basis) + "</code>");
  if (machine.peaks.is_object()) {
    Row(out, "f32 FMA peak", Esc(ThroughputText(machine.peaks, "f32_fma_gflops", "GFLOP/s")));
    Row(out, "f64 FMA peak", Esc(ThroughputText(machine.peaks, "f64_fma_gflops", "GFLOP/s")));
    Row(out, "bf16 dot peak", Esc(ThroughputText(machine.peaks, "bf16_dot_gops", "GOP/s")));
    Row(out, "int8 dot peak", Esc(ThroughputText(machine.peaks, "int8_dot_gops", "GOP/s")));
    Row(out, "memory read", Esc(ThroughputText(machine.peaks, "memory_read_gbs", "GB/s")));
  } else {
    Row(out, "peaks", "not measured (run <code>mmtune tune</code> or "
                      "<code>mmtune info --measure</code>)");
  }
  out << "</dl>\n</article>\n";
}

// ---- Tables ----

void WriteWinnersTable(std::ostream& out, const ReportData& data) {
  const bool several_machines = data.machines.size() > 1;
  out << "<table id=\"winners-table\" class=\"sortable\" data-rows=\"" << data.problems.size()
      << "\">\n<thead><tr>";
  if (several_machines) out << "<th data-type=\"text\">machine</th>";
  out << "<th data-type=\"text\">problem</th>"
         "<th data-type=\"number\" class=\"num\">M</th>"
         "<th data-type=\"number\" class=\"num\">N</th>"
         "<th data-type=\"number\" class=\"num\">K</th>"
         "<th data-type=\"number\" class=\"num\">threads</th>"
         "<th data-type=\"text\">winner config</th>"
         "<th data-type=\"number\" class=\"num\">GFLOP/s</th>"
         "<th data-type=\"number\" class=\"num\">% of roofline</th>"
         "<th data-type=\"number\" class=\"num\">default GFLOP/s</th>"
         "<th data-type=\"number\" class=\"num\">speed-up</th>"
         "<th data-type=\"number\" class=\"num\">measurements</th>"
         "<th data-type=\"text\">strategies</th></tr></thead>\n<tbody>\n";
  for (const TunedProblem& tuned : data.problems) {
    const Problem& p = tuned.problem;
    std::set<std::string> strategies;
    for (const SearchTrace& trace : tuned.searches) strategies.insert(trace.strategy);
    std::string strategy_text;
    for (const std::string& strategy : strategies) {
      strategy_text += (strategy_text.empty() ? "" : ", ") + strategy;
    }
    const std::optional<double> default_gflops =
        tuned.default_gflops > 0.0 ? std::optional<double>(tuned.default_gflops) : std::nullopt;
    out << "<tr>";
    if (several_machines) out << "<td><code>" << Esc(tuned.fingerprint) << "</code></td>";
    out << "<td>" << Esc(std::string(ToString(p.dtype)) + " " + ToString(p.layout) + " " +
                         TransPairToString(p.trans_a, p.trans_b) +
                         (IsPlainCall(p) ? "" : " " + FormName(p)))
        << "</td><td class=\"num\">" << p.m << "</td><td class=\"num\">" << p.n
        << "</td><td class=\"num\">" << p.k << "</td><td class=\"num\">" << p.threads
        << "</td><td><code>" << Esc(tuned.winner.ToString()) << "</code></td>"
        << "<td class=\"num\" data-value=\"" << SortValue(tuned.gflops) << "\">"
        << Fixed(tuned.gflops, 2) << "</td>"
        << "<td class=\"num\" data-value=\"" << SortValue(tuned.pct_of_roofline) << "\">"
        << Optional(tuned.pct_of_roofline, 1, "%") << "</td>"
        << "<td class=\"num\" data-value=\"" << SortValue(default_gflops) << "\">"
        << Optional(default_gflops, 2) << "</td>"
        << "<td class=\"num\" data-value=\"" << SortValue(tuned.speedup_vs_default) << "\">"
        << Optional(tuned.speedup_vs_default, 2, "x") << "</td>"
        << "<td class=\"num\">" << tuned.measurements << "</td><td>" << Esc(strategy_text)
        << "</td></tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

void WriteBench(std::ostream& out, const BenchResults& bench) {
  out << "<section id=\"bench\">\n<h2>Bench comparison</h2>\n<p class=\"note\">From <code>"
      << Esc(bench.path)
      << "</code>: GFLOP/s (% of the compute peak as the bench measured it), the median of "
         "repetitions.</p>\n";
  if (!bench.context.empty()) {
    out << "<dl class=\"bench-context\">\n";
    for (const auto& [key, value] : bench.context) {
      out << "<dt>" << Esc(key) << "</dt><dd>" << Esc(value) << "</dd>\n";
    }
    out << "</dl>\n";
  }
  std::vector<std::string> impls;
  for (const BenchProblem& problem : bench.problems) {
    for (const BenchImplResult& result : problem.results) {
      if (std::find(impls.begin(), impls.end(), result.impl) == impls.end()) {
        impls.push_back(result.impl);
      }
    }
  }
  out << "<table id=\"bench-table\">\n<thead><tr><th>problem</th>";
  for (const std::string& impl : impls) out << "<th class=\"num\">" << Esc(impl) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const BenchProblem& problem : bench.problems) {
    out << "<tr><td><code>" << Esc(problem.key) << "</code></td>";
    for (const std::string& impl : impls) {
      const auto result =
          std::find_if(problem.results.begin(), problem.results.end(),
                       [&](const BenchImplResult& r) { return r.impl == impl; });
      if (result == problem.results.end()) {
        out << "<td class=\"num\">-</td>";
      } else if (!result->gflops) {
        out << "<td class=\"num\" title=\"" << Esc(result->error) << "\">failed</td>";
      } else {
        out << "<td class=\"num\" title=\"" << Esc(result->label) << "\">"
            << Fixed(*result->gflops, 2) << " (" << Optional(result->pct_peak, 0, "%")
            << ")</td>";
      }
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n</section>\n";
}

void WriteValidations(std::ostream& out, const ReportData& data) {
  out << "<section id=\"validation\">\n<h2>Untuned shapes inside ranges</h2>\n<p class=\"note\">"
         "From <code>tune --validate N</code>: shapes inside a tuned range that are not buckets, "
         "each tuned on its own (not stored as a winner) and timed in one round beside what the "
         "runtime runs for it (its bucket's winner), what the nearest tier would run without the "
         "range, and the analytical default. Ratios are of the shape's own winner; a range's row "
         "gives their geometric means. Padded: the bucket's winner timed on the bucket shape, in "
         "the shape's flops, what running it on a zero-padded copy could reach at best (the "
         "copies not counted); the range's row counts the shapes where that beat the runtime.</p>\n"
         "<table id=\"validation-table\">\n<thead><tr><th>range</th><th>kind</th>"
         "<th class=\"num\">threads</th><th class=\"num\">session</th><th>shape</th>"
         "<th>runtime tier</th><th class=\"num\">own GFLOP/s</th><th class=\"num\">runtime</th>"
         "<th class=\"num\">nearest</th><th class=\"num\">default</th>"
         "<th class=\"num\">padded</th><th class=\"num\">own tune (s)</th></tr></thead>\n"
         "<tbody>\n";
  auto ratio = [](double value, double own) {
    return own > 0.0 && value > 0.0 ? Fixed(value / own, 3) + "x" : std::string("n/a");
  };
  for (const RangeValidationGroup& group : data.validations) {
    const ShapeRangeRecord& r = group.range;
    const ValidationSummary& s = group.summary;
    const std::string kind = std::string(ToString(r.dtype)) + " " + ToString(r.layout) + " " +
                             TransPairToString(r.trans_a, r.trans_b);
    out << "<tr class=\"range-row\"><td><code>" << Esc(r.range.ToString() + " " +
                                                        r.buckets.ToString())
        << "</code></td><td>" << Esc(kind) << "</td><td class=\"num\">" << r.threads
        << "</td><td class=\"num\">"
        << (group.session_id > 0 ? std::to_string(group.session_id) : "-")
        << "</td><td>geomean of " << s.shapes << "</td><td></td><td></td><td class=\"num\">"
        << (s.shapes > 0 ? Fixed(s.runtime_vs_own, 3) + "x" : "n/a") << "</td><td class=\"num\">"
        << (s.shapes > 0 ? Fixed(s.nearest_vs_own, 3) + "x" : "n/a") << "</td><td class=\"num\">"
        << (s.shapes > 0 ? Fixed(s.default_vs_own, 3) + "x" : "n/a") << "</td><td class=\"num\">"
        << "pays " << s.padding_pays << " of " << s.padded_measured << "</td><td class=\"num\">"
        << (s.shapes > 0 ? Fixed(s.own_tune_seconds, 1) : "n/a") << "</td></tr>\n";
    for (const RangeValidationRecord& v : group.shapes) {
      out << "<tr><td></td><td></td><td></td><td></td><td><code>" << v.shape.m << "x"
          << v.shape.n << "x" << v.shape.k << "</code></td><td>" << Esc(v.runtime_tier)
          << "</td><td class=\"num\">" << Fixed(v.own_gflops, 2) << "</td><td class=\"num\">"
          << ratio(v.runtime_gflops, v.own_gflops) << "</td><td class=\"num\">"
          << ratio(v.nearest_gflops, v.own_gflops) << "</td><td class=\"num\">"
          << ratio(v.default_gflops, v.own_gflops) << "</td><td class=\"num\">"
          << ratio(v.padded_gflops, v.own_gflops) << "</td><td class=\"num\">"
          << Fixed(v.own_tune_seconds, 1) << "</td></tr>\n";
    }
  }
  out << "</tbody>\n</table>\n</section>\n";
}

void WriteSessions(std::ostream& out, const ReportData& data) {
  std::map<std::int64_t, std::string> fingerprints;
  for (const ReportMachine& machine : data.machines) fingerprints[machine.id] = machine.fingerprint;
  out << "<section id=\"sessions\">\n<h2>Tuning sessions</h2>\n"
         "<table id=\"sessions-table\">\n<thead><tr><th class=\"num\">id</th><th>machine</th>"
         "<th>strategy</th><th class=\"num\">budget (s)</th><th class=\"num\">max evals</th>"
         "<th class=\"num\">seed</th><th>status</th><th>started</th><th>finished</th>"
         "<th>mmtune</th><th>command</th></tr></thead>\n<tbody>\n";
  for (const SessionRecord& session : data.sessions) {
    const auto fingerprint = fingerprints.find(session.machine_id);
    out << "<tr><td class=\"num\">" << session.id << "</td><td><code>"
        << Esc(fingerprint == fingerprints.end() ? "?" : fingerprint->second)
        << "</code></td><td>" << Esc(session.info.strategy) << "</td><td class=\"num\">"
        << (session.info.budget_seconds > 0.0 ? Fixed(session.info.budget_seconds, 1) : "none")
        << "</td><td class=\"num\">"
        << (session.info.max_evals > 0 ? std::to_string(session.info.max_evals) : "none")
        << "</td><td class=\"num\">" << session.info.seed << "</td><td>" << Esc(session.status)
        << "</td><td>" << Esc(session.started_at) << "</td><td>" << Esc(session.finished_at)
        << "</td><td>" << Esc(session.info.mmtune_version + " (" + session.info.git_revision + ")")
        << "</td><td><code>" << Esc(session.info.command) << "</code></td></tr>\n";
  }
  out << "</tbody>\n</table>\n</section>\n";
}

void WriteChart(std::ostream& out, const char* id, const char* title, const char* note,
                const std::string& extra = "") {
  out << "<div class=\"chart\" id=\"" << id << "\" data-points=\"0\" data-series=\"0\">\n<h3>"
      << title
      << "</h3>\n<p class=\"note\">" << note << "</p>\n"
      << extra << "<div class=\"canvas-box\"><canvas></canvas></div>\n</div>\n";
}

}  // namespace

Status WriteHtmlReport(const ReportData& data, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"" << kContentSecurityPolicy
      << "\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>mmtune report: " << data.problems.size() << " tuned problems</title>\n"
      << "<style>\n" << EmbeddedReportStyle() << "</style>\n</head>\n"
      << "<body data-report-errors=\"0\" data-charts-ready=\"0\">\n"
      << "<ul id=\"report-errors\" class=\"errors\"></ul>\n"
      << "<script>" << kErrorCapture << "</script>\n";

  out << "<header>\n<h1>mmtune tuning report</h1>\n<p class=\"meta\">"
      << data.problems.size() << " tuned problems on " << data.machines.size()
      << " machine(s), " << data.sessions.size() << " session(s), from <code>"
      << Esc(data.db_path) << "</code>; written " << Esc(data.generated_at) << " by mmtune "
      << Esc(data.mmtune_version) << " (" << Esc(data.git_revision) << ").</p>\n"
      << "<nav><a href=\"#machines\">machines</a><a href=\"#charts\">charts</a>"
      << "<a href=\"#winners\">winners</a>"
      << (data.validations.empty() ? "" : "<a href=\"#validation\">untuned shapes</a>")
      << (data.bench ? "<a href=\"#bench\">bench</a>" : "")
      << "<a href=\"#sessions\">sessions</a></nav>\n</header>\n";

  out << "<section id=\"machines\">\n<h2>Machines</h2>\n";
  for (const ReportMachine& machine : data.machines) WriteMachine(out, machine);
  if (data.machines.empty()) out << "<p>This DB holds no machine.</p>\n";
  out << "</section>\n";

  out << "<section id=\"charts\">\n<h2>Charts</h2>\n<div class=\"charts\">\n";
  WriteChart(out, "chart-speed", "GFLOP/s per problem",
             data.bench ? "The tuned winner and the analytical default as measured side by side "
                          "in the tune's confirm round, and every implementation of the bench "
                          "file (median of its repetitions)."
                        : "The tuned winner and the analytical default as measured side by side "
                          "in the tune's confirm round.");
  WriteChart(out, "chart-roofline", "Roofline",
             "Each winner at its arithmetic intensity (flops per byte of A, B and C, each moved "
             "once). Dashed: the machine's measured ceilings for the dtype and thread count, "
             "memory bandwidth times intensity up to the compute peak.");
  WriteChart(out, "chart-convergence", "Search convergence",
             "Best GFLOP/s found so far after each evaluation, one line per problem and tuning "
             "session. Single timings far apart in time drift on shared machines; the confirm "
             "round decides the winner.");
  WriteChart(out, "chart-landscape", "Parameter landscape",
             "Every timed config of one problem and kernel family, by its two main blocking "
             "parameters (packed: mc x kc; direct and gemv: mr x nr); colour and size show the "
             "best GFLOP/s of the configs that share the cell.",
             "<p><label>Problem: <select id=\"landscape-select\"></select></label> "
             "<span id=\"landscape-low\"></span><span class=\"legend-bar\"></span>"
             "<span id=\"landscape-high\"></span></p>\n");
  out << "</div>\n</section>\n";

  out << "<section id=\"winners\">\n<h2>Winners</h2>\n<p class=\"note\">Click a column heading "
         "to sort. % of roofline is relative to min(compute peak, intensity x bandwidth) for the "
         "problem's dtype and threads (to the compute peak alone when A, B and C fit in the "
         "last-level cache of a warm-cache timing); speed-up is over the analytical default timed "
         "in the same confirm round.</p>\n";
  WriteWinnersTable(out, data);
  out << "</section>\n";
  if (!data.validations.empty()) WriteValidations(out, data);
  if (data.bench) WriteBench(out, *data.bench);
  WriteSessions(out, data);

  out << "<footer>Charts drawn with Chart.js <span id=\"chartjs-version\"></span> (MIT "
         "license), embedded in this file: the page loads nothing from the network. The same "
         "data as JSON: <code>mmtune report --json</code> (schema in docs/report.md).</footer>\n"
      << "<script type=\"application/json\" id=\"report-data\">" << JsonForScript(ReportJson(data))
      << "</script>\n"
      << "<script>\n" << EmbeddedChartJs() << "\n</script>\n"
      << "<script>\n" << EmbeddedReportScript() << "\n</script>\n"
      << "</body>\n</html>\n";
  if (!out) return MakeError(ErrorCode::kIo, "writing the HTML report failed");
  return OkStatus();
}

}  // namespace mmtune
