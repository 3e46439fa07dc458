#include "reports/bench_results.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/text.h"

namespace mmtune {
namespace {

// Names from the file go into one-line error messages: control characters would break the line,
// and a huge name would drown the message.
std::string Printable(std::string_view text) {
  constexpr std::size_t kMaxLength = 120;
  std::string out;
  for (char c : text.substr(0, kMaxLength)) {
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  if (text.size() > kMaxLength) out += "...";
  return out;
}

bool IsImplName(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// What Google Benchmark appends to a registered name: "/real_time", "/manual_time",
// "/process_time" and modifiers such as "/repeats:3", "/min_time:0.100", "/threads:1".
bool IsBenchmarkModifier(std::string_view part) {
  return part == "real_time" || part == "manual_time" || part == "process_time" ||
         (part.find(':') != std::string_view::npos && part.front() != ':');
}

struct ParsedName {
  Problem problem;
  std::string impl;
};

Result<ParsedName> ParseBenchName(std::string_view name) {
  const auto malformed = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "benchmark '" + Printable(name) + "' " + why +
                         " (expected <dtype>/<layout>/<trans>/<M>x<N>x<K>/t<threads>/<impl>)");
  };
  const std::vector<std::string_view> parts = Split(name, '/');
  if (parts.size() < 6) return malformed("has too few parts");
  for (std::size_t i = 6; i < parts.size(); ++i) {
    if (!IsBenchmarkModifier(parts[i])) {
      return malformed("has an unexpected part '" + Printable(parts[i]) + "'");
    }
  }
  ParsedName parsed;
  auto dtype = ParseDType(parts[0]);
  auto layout = ParseLayout(parts[1]);
  auto trans = ParseTransPair(parts[2]);
  auto shape = ParseShape(parts[3]);
  if (!dtype) return malformed("has an unknown dtype");
  if (!layout) return malformed("has an unknown layout");
  if (!trans) return malformed("has an unknown transpose pair");
  if (!shape) return malformed("has a malformed shape");
  const std::string_view threads = parts[4];
  if (threads.size() < 2 || threads.size() > 5 || threads[0] != 't' ||
      !std::all_of(threads.begin() + 1, threads.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return malformed("has a malformed thread count");
  }
  if (!IsImplName(parts[5])) return malformed("has a malformed implementation name");
  parsed.problem = Problem{*dtype, *layout, trans->first, trans->second, shape->m, shape->n,
                           shape->k, std::stoi(std::string(threads.substr(1)))};
  if (Status valid = parsed.problem.Validate(); !valid) return malformed(valid.error().message);
  parsed.impl = std::string(parts[5]);
  return parsed;
}

// Counters as Google Benchmark writes them: plain JSON numbers.
Result<std::optional<double>> NumberField(const nlohmann::json& entry, const char* key,
                                          bool required, const std::string& name) {
  const auto it = entry.find(key);
  if (it == entry.end()) {
    if (!required) return std::optional<double>();
    return MakeError(ErrorCode::kInvalidArgument,
                     "benchmark '" + Printable(name) + "' has no \"" + key + "\" counter");
  }
  if (!it->is_number()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "benchmark '" + Printable(name) + "': \"" + key + "\" is not a number");
  }
  return std::optional<double>(it->get<double>());
}

std::optional<double> Median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Everything the file says about one (problem, impl), before the median is taken.
struct Collected {
  std::optional<double> median_gflops;
  std::optional<double> median_pct;
  std::vector<double> gflops;
  std::vector<double> pct;
  std::string label;
  std::string error;
};

// mmtune's own rows first, so tables and charts read the same in every report.
int ImplRank(const std::string& impl) {
  if (impl == "tuned") return 0;
  if (impl == "default") return 1;
  return 2;
}

bool IsShownContextKey(const std::string& key) {
  return key.rfind("mmtune_", 0) == 0 || key.rfind("peer_", 0) == 0 || key == "date" ||
         key == "host_name";
}

Result<BenchResults> ParseDocument(const nlohmann::json& document, const std::string& path) {
  if (!document.is_object()) {
    return MakeError(ErrorCode::kInvalidArgument, "is not a JSON object");
  }
  BenchResults results;
  results.path = path;
  if (const auto context = document.find("context"); context != document.end()) {
    if (!context->is_object()) {
      return MakeError(ErrorCode::kInvalidArgument, "\"context\" is not an object");
    }
    for (const auto& [key, value] : context->items()) {
      if (!IsShownContextKey(key)) continue;
      results.context.emplace_back(
          key, value.is_string() ? value.get<std::string>()
                                 : value.dump(-1, ' ', false,
                                              nlohmann::json::error_handler_t::replace));
    }
    std::sort(results.context.begin(), results.context.end());
  }
  const auto benchmarks = document.find("benchmarks");
  if (benchmarks == document.end() || !benchmarks->is_array()) {
    return MakeError(ErrorCode::kInvalidArgument, "has no \"benchmarks\" array");
  }

  std::vector<std::string> keys;  // first-seen order of problems
  std::map<std::string, BenchProblem> problems;
  std::map<std::pair<std::string, std::string>, Collected> collected;
  for (const nlohmann::json& entry : *benchmarks) {
    if (!entry.is_object()) {
      return MakeError(ErrorCode::kInvalidArgument, "an entry of \"benchmarks\" is not an object");
    }
    const auto name_it = entry.find("name");
    if (name_it == entry.end() || !name_it->is_string()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "an entry of \"benchmarks\" has no \"name\" string");
    }
    const std::string name = name_it->get<std::string>();
    const auto aggregate_it = entry.find("aggregate_name");
    const bool aggregate = (aggregate_it != entry.end() && aggregate_it->is_string()) ||
                           entry.value("run_type", nlohmann::json()) == "aggregate";
    const std::string aggregate_name =
        aggregate_it != entry.end() && aggregate_it->is_string() ? aggregate_it->get<std::string>()
                                                                 : std::string();
    // Aggregates are named "<run_name>_<aggregate>"; "run_name" names the run itself.
    std::string run_name = name;
    if (const auto run_it = entry.find("run_name"); run_it != entry.end() && run_it->is_string()) {
      run_name = run_it->get<std::string>();
    } else if (aggregate && !aggregate_name.empty()) {
      const std::string suffix = "_" + aggregate_name;
      if (run_name.size() > suffix.size() &&
          run_name.compare(run_name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        run_name.resize(run_name.size() - suffix.size());
      }
    }
    auto parsed = ParseBenchName(run_name);
    if (!parsed) return parsed.error();
    // Means, standard deviations and coefficients of variation are not speeds to compare.
    if (aggregate && aggregate_name != "median") continue;

    const std::string key = ProblemKey(parsed->problem);
    if (problems.find(key) == problems.end()) {
      keys.push_back(key);
      problems[key] = BenchProblem{key, parsed->problem, {}};
    }
    auto& results_of = problems[key].results;
    if (std::none_of(results_of.begin(), results_of.end(),
                     [&](const BenchImplResult& r) { return r.impl == parsed->impl; })) {
      results_of.push_back(BenchImplResult{parsed->impl, {}, {}, false, 0, {}, {}});
    }
    Collected& into = collected[{key, parsed->impl}];
    if (const auto label = entry.find("label"); label != entry.end() && label->is_string()) {
      into.label = label->get<std::string>();
    }
    if (entry.value("error_occurred", nlohmann::json(false)) == true) {
      if (into.error.empty()) {
        const auto message = entry.find("error_message");
        into.error = message != entry.end() && message->is_string()
                         ? message->get<std::string>()
                         : std::string("the run failed");
      }
      continue;
    }
    auto gflops = NumberField(entry, "gflops", /*required=*/true, name);
    if (!gflops) return gflops.error();
    auto pct = NumberField(entry, "pct_peak", /*required=*/false, name);
    if (!pct) return pct.error();
    if (aggregate) {
      into.median_gflops = *gflops;
      into.median_pct = *pct;
    } else {
      into.gflops.push_back(**gflops);
      if (*pct) into.pct.push_back(**pct);
    }
  }

  for (const std::string& key : keys) {
    BenchProblem problem = std::move(problems[key]);
    for (BenchImplResult& result : problem.results) {
      Collected& from = collected[{key, result.impl}];
      result.label = from.label;
      result.runs = static_cast<int>(from.gflops.size());
      if (from.median_gflops) {
        result.from_median_aggregate = true;
        result.gflops = from.median_gflops;
        result.pct_peak = from.median_pct;
      } else {
        result.gflops = Median(from.gflops);
        result.pct_peak = Median(from.pct);
      }
      if (!result.gflops) result.error = from.error;
    }
    std::stable_sort(problem.results.begin(), problem.results.end(),
                     [](const BenchImplResult& a, const BenchImplResult& b) {
                       const int rank_a = ImplRank(a.impl);
                       const int rank_b = ImplRank(b.impl);
                       return rank_a != rank_b ? rank_a < rank_b : a.impl < b.impl;
                     });
    results.problems.push_back(std::move(problem));
  }
  return results;
}

}  // namespace

std::string ProblemKey(const Problem& problem) {
  return std::string(ToString(problem.dtype)) + "/" + ToString(problem.layout) + "/" +
         TransPairToString(problem.trans_a, problem.trans_b) + "/" + std::to_string(problem.m) +
         "x" + std::to_string(problem.n) + "x" + std::to_string(problem.k) + "/t" +
         std::to_string(problem.threads) +
         (IsPlainCall(problem) ? "" : "/" + FormName(problem));
}

Result<BenchResults> ParseBenchResults(std::string_view text, const std::string& path) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 7: ..." without the tag.
    std::string what = e.what();
    if (const std::size_t tag_end = what.find("] "); what.rfind("[json.", 0) == 0 &&
                                                    tag_end != std::string::npos) {
      what = what.substr(tag_end + 2);
    }
    return MakeError(ErrorCode::kInvalidArgument,
                     "bench file " + path + " is not valid JSON: " + what);
  }
  auto results = ParseDocument(document, path);
  if (!results) {
    return MakeError(results.error().code, "bench file " + path + ": " + results.error().message);
  }
  return results;
}

Result<BenchResults> ReadBenchResults(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT) {
      return MakeError(ErrorCode::kNotFound, "bench file " + path + " does not exist");
    }
    return MakeError(ErrorCode::kIo, "cannot access bench file " + path + ": " +
                                         std::strerror(error));
  }
  if (S_ISDIR(info.st_mode)) {
    return MakeError(ErrorCode::kIo, "bench file " + path + " is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kIo, "cannot read bench file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return MakeError(ErrorCode::kIo, "cannot read bench file " + path);
  return ParseBenchResults(text.str(), path);
}

}  // namespace mmtune
