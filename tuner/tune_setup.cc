#include "tuner/tune_setup.h"

#include <algorithm>

#include "runtime/record_file.h"
#include "tuner/quiet_peaks.h"

namespace mmtune {

Result<TuneMachine> RegisterTuneMachine(TuningStore& store, Machine* machine,
                                        const std::function<void(const std::string&)>& say) {
  auto known = store.FindMachine(machine->fingerprint);
  if (!known) return known.error();
  const nlohmann::json stored = *known ? (*known)->peaks : nlohmann::json(nullptr);
  if (say) {
    say(stored.is_null() ? "measuring this machine's peaks ..."
                         : "checking this machine's stored peaks ...");
  }
  auto measured = MeasurePeaksWhenQuiet(*machine, stored);
  if (!measured) return measured.error();
  auto id = store.UpsertMachine(*machine, measured->peaks);
  if (!id) return id.error();
  TakeMeasuredFacts(measured->peaks, machine);
  return TuneMachine{*id, std::move(measured->peaks), std::move(measured->note)};
}

Result<std::vector<Problem>> RecordedProblemsToTune(const std::string& path, int cores) {
  auto recorded = ReadRecordFile(path);
  if (!recorded) return recorded.error();
  std::vector<Problem> problems;
  for (const RecordedProblem& item : *recorded) {
    if (item.problem.k < 1) continue;
    Problem problem = item.problem;
    problem.threads = std::min(problem.threads, std::max(1, cores));
    problems.push_back(problem);
  }
  return problems;
}

}  // namespace mmtune
