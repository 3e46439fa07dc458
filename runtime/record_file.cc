#include "runtime/record_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

namespace mmtune {
namespace {

constexpr int kRecordVersion = 1;

Error Corrupt(const std::string& path, const std::string& why) {
  return Error{ErrorCode::kCorrupt, path + ": not an mmtune record file (" + why + ")"};
}

Result<RecordedProblem> ProblemFromJson(const nlohmann::json& item) {
  auto fail = [](const std::string& why) { return MakeError(ErrorCode::kCorrupt, why); };
  if (!item.is_object()) return fail("a problem is not an object");
  for (const char* key : {"dtype", "layout", "trans"}) {
    if (!item.contains(key) || !item[key].is_string()) {
      return fail(std::string("'") + key + "' missing or not a string");
    }
  }
  for (const char* key : {"m", "n", "k", "threads", "calls"}) {
    if (!item.contains(key) || !item[key].is_number_integer()) {
      return fail(std::string("'") + key + "' missing or not an integer");
    }
  }
  if (!item.contains("seconds") || !item["seconds"].is_number()) {
    return fail("'seconds' missing or not a number");
  }
  auto dtype = ParseDType(item["dtype"].get<std::string>());
  if (!dtype) return fail(dtype.error().message);
  auto layout = ParseLayout(item["layout"].get<std::string>());
  if (!layout) return fail(layout.error().message);
  auto trans = ParseTransPair(item["trans"].get<std::string>());
  if (!trans) return fail(trans.error().message);
  RecordedProblem recorded;
  recorded.problem = Problem{*dtype, *layout, trans->first, trans->second,
                             item["m"].get<std::int64_t>(), item["n"].get<std::int64_t>(),
                             item["k"].get<std::int64_t>(), item["threads"].get<int>()};
  // Absent for plain single calls.
  if (item.contains("form")) {
    if (!item["form"].is_string()) return fail("'form' is not a string");
    const Status form = ParseFormName(item["form"].get<std::string>(), recorded.problem);
    if (!form) return fail(form.error().message);
  }
  if (auto status = recorded.problem.Validate(); !status) return fail(status.error().message);
  const std::int64_t calls = item["calls"].get<std::int64_t>();
  recorded.seconds = item["seconds"].get<double>();
  if (calls < 0 || !(recorded.seconds >= 0.0) || !std::isfinite(recorded.seconds)) {
    return fail("negative or non-finite calls/seconds");
  }
  recorded.calls = static_cast<std::uint64_t>(calls);
  return recorded;
}

nlohmann::json ProblemToJson(const RecordedProblem& recorded) {
  const Problem& p = recorded.problem;
  nlohmann::json item = {{"dtype", ToString(p.dtype)},
                         {"layout", ToString(p.layout)},
                         {"trans", TransPairToString(p.trans_a, p.trans_b)},
                         {"m", p.m},
                         {"n", p.n},
                         {"k", p.k},
                         {"threads", p.threads},
                         {"calls", recorded.calls},
                         {"seconds", recorded.seconds}};
  if (!IsPlainCall(p)) item["form"] = FormName(p);
  return item;
}

void SortByTime(std::vector<RecordedProblem>& problems) {
  std::stable_sort(problems.begin(), problems.end(),
                   [](const RecordedProblem& x, const RecordedProblem& y) {
                     return x.seconds > y.seconds;
                   });
}

auto KeyOf(const Problem& p) {
  return std::make_tuple(p.dtype, p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, p.threads,
                         p.form, p.batch);
}

// An exclusive advisory lock on "<path>.lock" for as long as it lives, so that processes merging
// into one record file take turns (the file itself is replaced by rename, so it cannot be the
// lock).
class LockFile {
 public:
  static Result<LockFile> Acquire(const std::string& path) {
    const std::string lock_path = path + ".lock";
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return MakeError(ErrorCode::kIo, lock_path + ": cannot open (" + std::strerror(errno) + ")");
    }
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd);
        return MakeError(ErrorCode::kIo, lock_path + ": cannot lock (" + std::strerror(errno) + ")");
      }
    }
    return LockFile(fd);
  }
  LockFile(LockFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LockFile& operator=(LockFile&&) = delete;
  ~LockFile() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }

 private:
  explicit LockFile(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace

Result<std::vector<RecordedProblem>> ReadRecordFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (::access(path.c_str(), F_OK) != 0) {
      return MakeError(ErrorCode::kNotFound, path + ": no such record file");
    }
    return MakeError(ErrorCode::kIo, path + ": cannot read (" + std::strerror(errno) + ")");
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Corrupt(path, "not a JSON object");
  if (!doc.contains("mmtune_record") || !doc["mmtune_record"].is_number_integer()) {
    return Corrupt(path, "no 'mmtune_record' version");
  }
  if (doc["mmtune_record"].get<std::int64_t>() != kRecordVersion) {
    return MakeError(ErrorCode::kUnsupported,
                     path + ": record version " + doc["mmtune_record"].dump() +
                         " is not the one this mmtune reads (" +
                         std::to_string(kRecordVersion) + ")");
  }
  if (!doc.contains("problems") || !doc["problems"].is_array()) {
    return Corrupt(path, "no 'problems' array");
  }
  std::vector<RecordedProblem> problems;
  for (const nlohmann::json& item : doc["problems"]) {
    auto recorded = ProblemFromJson(item);
    if (!recorded) return Corrupt(path, recorded.error().message);
    problems.push_back(*recorded);
  }
  SortByTime(problems);
  return problems;
}

Status MergeIntoRecordFile(const std::string& path, const std::vector<RecordedProblem>& recorded) {
  if (path.empty()) return MakeError(ErrorCode::kInvalidArgument, "empty record file path");
  auto lock = LockFile::Acquire(path);
  if (!lock) return lock.error();

  std::vector<RecordedProblem> merged;
  if (auto earlier = ReadRecordFile(path)) {
    merged = std::move(*earlier);
  } else if (earlier.error().code != ErrorCode::kNotFound) {
    return earlier.error();  // never overwrite a file we cannot read as ours
  }
  std::map<decltype(KeyOf(Problem{})), std::size_t> position;
  for (std::size_t i = 0; i < merged.size(); ++i) position[KeyOf(merged[i].problem)] = i;
  for (const RecordedProblem& item : recorded) {
    const auto [it, inserted] = position.emplace(KeyOf(item.problem), merged.size());
    if (inserted) {
      merged.push_back(item);
    } else {
      merged[it->second].calls += item.calls;
      merged[it->second].seconds += item.seconds;
    }
  }
  SortByTime(merged);

  nlohmann::json doc = {{"mmtune_record", kRecordVersion}, {"problems", nlohmann::json::array()}};
  for (const RecordedProblem& item : merged) doc["problems"].push_back(ProblemToJson(item));
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << doc.dump(1) << '\n';
    out.flush();
    if (!out) {
      ::unlink(temp.c_str());
      return MakeError(ErrorCode::kIo, temp + ": cannot write the record file");
    }
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    return MakeError(ErrorCode::kIo, path + ": cannot replace (" + why + ")");
  }
  return OkStatus();
}

}  // namespace mmtune
