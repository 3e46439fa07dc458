#include "cli/report_command.h"

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>

#include "db/store.h"
#include "reports/bench_results.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/report_data.h"
#include "reports/report_file.h"

namespace mmtune::cli {
namespace {

struct ReportOptions {
  std::string db = "mmtune.db";
  std::string bench;
  std::string html;
  std::string json;
};

// Whether two paths name the same file, also through links and `..`; never throws.
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error) && !error) return true;
  const auto canonical = [](const std::string& path) {
    std::error_code ignored;
    std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ignored);
    return ignored ? std::filesystem::absolute(path, ignored).lexically_normal() : resolved;
  };
  return canonical(a) == canonical(b);
}

std::string Plural(std::size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

void RunReport(const ReportOptions& options, Context& context) {
  // The command line is checked before any file is read.
  if (options.html.empty() && options.json.empty()) {
    return context.Fail(kExitUsage, "give --html FILE, --json FILE or both");
  }
  if (!options.html.empty() && !options.json.empty() && SameFile(options.html, options.json)) {
    return context.Fail(kExitUsage, "--html and --json name the same file " + options.html);
  }
  for (const std::string* output : {&options.html, &options.json}) {
    if (output->empty()) continue;
    const char* flag = output == &options.html ? "--html" : "--json";
    if (SameFile(*output, options.db)) {
      return context.Fail(kExitUsage, std::string(flag) + " " + *output +
                                          " is the DB itself; the report never overwrites it");
    }
    if (!options.bench.empty() && SameFile(*output, options.bench)) {
      return context.Fail(kExitUsage,
                          std::string(flag) + " " + *output + " is the --bench file itself");
    }
  }

  auto store = TuningStore::Open(options.db, DbOpenMode::kReadOnly);
  if (!store) return context.Fail(kExitFailure, store.error().message);
  std::optional<BenchResults> bench;
  if (!options.bench.empty()) {
    auto read = ReadBenchResults(options.bench);
    if (!read) {
      // A file that is not there is a wrong command line; one that is there but wrong is not.
      const bool usage = read.error().code == ErrorCode::kNotFound;
      return context.Fail(usage ? kExitUsage : kExitFailure, "--bench: " + read.error().message);
    }
    bench = std::move(*read);
  }
  auto data = CollectReportData(*store);
  if (!data) return context.Fail(kExitFailure, data.error().message);
  data->bench = std::move(bench);

  std::string written;
  const auto emit = [&](const std::string& path, const auto& format) -> bool {
    std::ostringstream text;
    Status status = format(*data, text);
    if (status) status = WriteReportFile(path, text.str());
    if (!status) {
      context.Fail(kExitFailure, status.error().message);
      return false;
    }
    written += (written.empty() ? "" : " and ") + path;
    return true;
  };
  if (!options.html.empty() && !emit(options.html, WriteHtmlReport)) return;
  if (!options.json.empty() && !emit(options.json, WriteJsonReport)) return;

  *context.out << "wrote " << written << " (" << Plural(data->problems.size(), "problem") << ", "
               << Plural(data->machines.size(), "machine");
  if (data->bench) {
    *context.out << ", " << Plural(data->bench->problems.size(), "bench problem");
  }
  *context.out << ")\n";
}

}  // namespace

void SetupReportCommand(CLI::App& app, Context& context) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Write the report of a tuning DB: a JSON document (schema in docs/report.md) and/or one "
      "self-contained HTML page with charts that opens offline. The DB is only read.");
  command->add_option("--db", options->db, "Tuning DB to read (never modified)")
      ->capture_default_str();
  command->add_option("--bench", options->bench,
                      "Google Benchmark JSON from 'mmtune bench --json FILE' to compare the "
                      "tuned runtime with the default and the peer libraries");
  command->add_option("--html", options->html, "HTML report to write (replaced if it exists)");
  command->add_option("--json", options->json, "JSON report to write (replaced if it exists)");
  command->callback([options, &context]() { RunReport(*options, context); });
}

}  // namespace mmtune::cli
