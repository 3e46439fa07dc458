#include "db/export_document.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "mmtune/version.h"

namespace mmtune {
namespace {

// Field access that reports instead of throwing; `where` says which record is read.
class Reader {
 public:
  Reader(const nlohmann::json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  Result<const nlohmann::json*> Get(const char* key, nlohmann::json::value_t type) const {
    const auto found = object_.find(key);
    if (found == object_.end()) return Wrong(std::string("has no \"") + key + "\"");
    const bool number_wanted = type == nlohmann::json::value_t::number_float;
    if (number_wanted ? !found->is_number() : found->type() != type) {
      return Wrong(std::string("has a \"") + key + "\" of the wrong type");
    }
    return &*found;
  }

  Result<std::string> String(const char* key) const {
    auto value = Get(key, nlohmann::json::value_t::string);
    if (!value) return value.error();
    return (*value)->get<std::string>();
  }

  // Integers in [minimum, max]; JSON numbers that are integral but written as unsigned count too.
  Result<std::int64_t> Integer(const char* key, std::int64_t minimum) const {
    const auto found = object_.find(key);
    if (found == object_.end()) return Wrong(std::string("has no \"") + key + "\"");
    if (found->is_number_integer()) {
      const bool fits = !found->is_number_unsigned() ||
                        found->get<std::uint64_t>() <=
                            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      if (fits && found->get<std::int64_t>() >= minimum) return found->get<std::int64_t>();
    }
    return Wrong(std::string("has a \"") + key + "\" that is not an integer >= " +
                 std::to_string(minimum));
  }

  Result<double> Number(const char* key) const {
    auto value = Get(key, nlohmann::json::value_t::number_float);
    if (!value) return value.error();
    return (*value)->get<double>();
  }

  Error Wrong(const std::string& what) const {
    return MakeError(ErrorCode::kCorrupt, where_ + " " + what);
  }

 private:
  const nlohmann::json& object_;
  std::string where_;
};

// The "dtype", "layout", "trans" and "threads" of a winner or a range, into `kind` (its M, N and
// K are left alone).
Status ReadProblemKind(const Reader& reader, Problem& kind) {
  auto dtype = reader.String("dtype");
  if (!dtype) return dtype.error();
  auto parsed_dtype = ParseDType(*dtype);
  if (!parsed_dtype) return reader.Wrong(parsed_dtype.error().message);
  kind.dtype = *parsed_dtype;
  auto layout = reader.String("layout");
  if (!layout) return layout.error();
  auto parsed_layout = ParseLayout(*layout);
  if (!parsed_layout) return reader.Wrong(parsed_layout.error().message);
  kind.layout = *parsed_layout;
  auto trans = reader.String("trans");
  if (!trans) return trans.error();
  auto parsed_trans = ParseTransPair(*trans);
  if (!parsed_trans) return reader.Wrong(parsed_trans.error().message);
  std::tie(kind.trans_a, kind.trans_b) = *parsed_trans;
  auto threads = reader.Integer("threads", 1);
  if (!threads) return threads.error();
  if (*threads > std::numeric_limits<int>::max()) return reader.Wrong("has too many \"threads\"");
  kind.threads = static_cast<int>(*threads);
  return OkStatus();
}

Result<MachineRecord> ParseMachine(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) return MakeError(ErrorCode::kCorrupt, where + " is not an object");
  const Reader reader(json, where);
  MachineRecord machine;
  auto fingerprint = reader.String("fingerprint");
  if (!fingerprint) return fingerprint.error();
  if (fingerprint->empty()) return reader.Wrong("has an empty \"fingerprint\"");
  machine.fingerprint = std::move(*fingerprint);
  auto basis = reader.String("fingerprint_basis");
  if (!basis) return basis.error();
  machine.fingerprint_basis = std::move(*basis);
  auto description = reader.Get("description", nlohmann::json::value_t::object);
  if (!description) return description.error();
  machine.description = **description;
  const auto peaks = json.find("peaks");
  if (peaks != json.end() && !peaks->is_null() && !peaks->is_object()) {
    return reader.Wrong("has \"peaks\" that are neither null nor an object");
  }
  machine.peaks = peaks == json.end() ? nlohmann::json(nullptr) : *peaks;
  return machine;
}

Result<WinnerRecord> ParseWinner(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) return MakeError(ErrorCode::kCorrupt, where + " is not an object");
  const Reader reader(json, where);
  WinnerRecord winner;
  auto fingerprint = reader.String("fingerprint");
  if (!fingerprint) return fingerprint.error();
  winner.fingerprint = std::move(*fingerprint);

  Problem& problem = winner.problem;
  if (Status kind = ReadProblemKind(reader, problem); !kind) return kind.error();
  for (auto [key, field] : {std::pair{"m", &problem.m}, std::pair{"n", &problem.n},
                            std::pair{"k", &problem.k}}) {
    auto value = reader.Integer(key, 1);
    if (!value) return value.error();
    *field = *value;
  }
  // Absent in version 1, whose winners are all plain calls'.
  if (json.contains("form")) {
    auto form = reader.String("form");
    if (!form) return form.error();
    if (Status parsed = ParseFormName(*form, problem); !parsed) {
      return reader.Wrong(parsed.error().message);
    }
  }
  if (Status valid = problem.Validate(); !valid) return reader.Wrong(valid.error().message);

  auto config_json = reader.Get("config", nlohmann::json::value_t::object);
  if (!config_json) return config_json.error();
  auto config = KernelConfigFromJson(**config_json);
  if (!config) return reader.Wrong("has a bad \"config\": " + config.error().message);
  winner.config = *config;
  for (auto [key, field] : {std::pair{"gflops", &winner.gflops},
                            std::pair{"median_seconds", &winner.median_seconds},
                            std::pair{"default_gflops", &winner.default_gflops}}) {
    auto value = reader.Number(key);
    if (!value) return value.error();
    if (!(*value >= 0.0)) return reader.Wrong(std::string("has a negative \"") + key + "\"");
    *field = *value;
  }
  // Optional: an import without it is stamped with the time of the import.
  if (json.contains("updated_at")) {
    auto updated_at = reader.String("updated_at");
    if (!updated_at) return updated_at.error();
    winner.updated_at = std::move(*updated_at);
  }
  return winner;
}

Result<ShapeRangeRecord> ParseRange(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) return MakeError(ErrorCode::kCorrupt, where + " is not an object");
  const Reader reader(json, where);
  ShapeRangeRecord range;
  auto fingerprint = reader.String("fingerprint");
  if (!fingerprint) return fingerprint.error();
  range.fingerprint = std::move(*fingerprint);
  Problem kind;
  if (Status read = ReadProblemKind(reader, kind); !read) return read.error();
  range.dtype = kind.dtype;
  range.layout = kind.layout;
  range.trans_a = kind.trans_a;
  range.trans_b = kind.trans_b;
  range.threads = kind.threads;
  auto text = reader.String("range");
  if (!text) return text.error();
  auto parsed_range = ParseShapeRange(*text);
  if (!parsed_range) return reader.Wrong(parsed_range.error().message);
  range.range = *parsed_range;
  auto buckets = reader.String("buckets");
  if (!buckets) return buckets.error();
  auto policy = ParseBucketPolicy(*buckets);
  if (!policy) return reader.Wrong(policy.error().message);
  range.buckets = *policy;
  if (json.contains("updated_at")) {
    auto updated_at = reader.String("updated_at");
    if (!updated_at) return updated_at.error();
    range.updated_at = std::move(*updated_at);
  }
  return range;
}

}  // namespace

nlohmann::json ExportDocumentOf(const WinnerSet& content) {
  nlohmann::json machines = nlohmann::json::array();
  for (const MachineRecord& machine : content.machines) {
    machines.push_back({{"fingerprint", machine.fingerprint},
                        {"fingerprint_basis", machine.fingerprint_basis},
                        {"description", machine.description},
                        {"peaks", machine.peaks}});
  }
  nlohmann::json winners = nlohmann::json::array();
  for (const WinnerRecord& winner : content.winners) {
    nlohmann::json config;
    to_json(config, winner.config);
    const Problem& problem = winner.problem;
    winners.push_back({{"fingerprint", winner.fingerprint},
                       {"dtype", ToString(problem.dtype)},
                       {"layout", ToString(problem.layout)},
                       {"trans", TransPairToString(problem.trans_a, problem.trans_b)},
                       {"m", problem.m},
                       {"n", problem.n},
                       {"k", problem.k},
                       {"threads", problem.threads},
                       {"form", FormName(problem)},
                       {"config", std::move(config)},
                       {"gflops", winner.gflops},
                       {"median_seconds", winner.median_seconds},
                       {"default_gflops", winner.default_gflops},
                       {"updated_at", winner.updated_at}});
  }
  nlohmann::json ranges = nlohmann::json::array();
  for (const ShapeRangeRecord& range : content.ranges) {
    ranges.push_back({{"fingerprint", range.fingerprint},
                      {"dtype", ToString(range.dtype)},
                      {"layout", ToString(range.layout)},
                      {"trans", TransPairToString(range.trans_a, range.trans_b)},
                      {"threads", range.threads},
                      {"range", range.range.ToString()},
                      {"buckets", range.buckets.ToString()},
                      {"updated_at", range.updated_at}});
  }
  return {{"schema_version", kExportJsonSchemaVersion},
          {"generator", std::string("mmtune ") + kVersion + " (" + kGitRevision + ")"},
          {"machines", std::move(machines)},
          {"winners", std::move(winners)},
          {"ranges", std::move(ranges)}};
}

Result<WinnerSet> ParseExportDocument(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) {
    return MakeError(ErrorCode::kCorrupt, origin + " is not an mmtune JSON export");
  }
  const Reader reader(document, origin);
  const auto version = document.find("schema_version");
  if (version == document.end() || !version->is_number_integer()) {
    return reader.Wrong("is not an mmtune JSON export (no \"schema_version\")");
  }
  if (*version != kExportJsonSchemaVersion && *version != 1) {
    return MakeError(ErrorCode::kUnsupported,
                     origin + " is a JSON export of schema version " + version->dump() +
                         ", which this mmtune cannot read (it reads versions " +
                         "1 and " + std::to_string(kExportJsonSchemaVersion) + ")");
  }
  auto machines = reader.Get("machines", nlohmann::json::value_t::array);
  if (!machines) return machines.error();
  auto winners = reader.Get("winners", nlohmann::json::value_t::array);
  if (!winners) return winners.error();

  WinnerSet content;
  std::set<std::string, std::less<>> fingerprints;
  for (std::size_t i = 0; i < (*machines)->size(); ++i) {
    auto machine = ParseMachine((**machines)[i], origin + ": machine " + std::to_string(i));
    if (!machine) return machine.error();
    if (!fingerprints.insert(machine->fingerprint).second) {
      return reader.Wrong("holds machine " + machine->fingerprint + " twice");
    }
    content.machines.push_back(std::move(*machine));
  }
  for (std::size_t i = 0; i < (*winners)->size(); ++i) {
    auto winner = ParseWinner((**winners)[i], origin + ": winner " + std::to_string(i));
    if (!winner) return winner.error();
    if (fingerprints.count(winner->fingerprint) == 0) {
      return MakeError(ErrorCode::kCorrupt,
                       origin + ": winner " + std::to_string(i) + " is of machine " +
                           winner->fingerprint + ", which the document does not hold");
    }
    content.winners.push_back(std::move(*winner));
  }
  if (document.contains("ranges")) {
    auto ranges = reader.Get("ranges", nlohmann::json::value_t::array);
    if (!ranges) return ranges.error();
    for (std::size_t i = 0; i < (*ranges)->size(); ++i) {
      const std::string where = origin + ": range " + std::to_string(i);
      auto range = ParseRange((**ranges)[i], where);
      if (!range) return range.error();
      if (fingerprints.count(range->fingerprint) == 0) {
        return MakeError(ErrorCode::kCorrupt, where + " is of machine " + range->fingerprint +
                                                  ", which the document does not hold");
      }
      content.ranges.push_back(std::move(*range));
    }
  }
  return content;
}

bool LooksLikeJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c)) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) return c == '{';
  }
  return false;
}

Result<WinnerSet> ReadExportDocument(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    return MakeError(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                     "cannot read " + path + ": " + std::strerror(error));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return MakeError(ErrorCode::kIo, "cannot read " + path);
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return MakeError(ErrorCode::kCorrupt, path + " is not valid JSON");
  }
  return ParseExportDocument(document, path);
}

}  // namespace mmtune
