// What a tune needs before its search starts, apart from the command line: the machine's row
// in the DB with the peaks that "% of peak" reads, and the problems of a record file.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "db/store.h"
#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

struct TuneMachine {
  std::int64_t id = 0;    // the machine's row in the DB
  nlohmann::json peaks;   // to_json(PeakReport), as stored with it
  std::string note;       // why peaks were not measured again (a busy machine), or empty
};

// Records `machine` in `store` with its peaks: measured now where none are stored, else
// checked again while the machine is quiet, so that a low stored peak is corrected
// (quiet_peaks.h); `*machine` then takes the facts they measured (TakeMeasuredFacts), as a
// runtime reading the DB will. `say` hears which of the two happens, before it takes its
// second or more.
Result<TuneMachine> RegisterTuneMachine(TuningStore& store, Machine* machine,
                                        const std::function<void(const std::string&)>& say);

// The problems an application recorded (MMTUNE_RECORD, runtime/record_file.h) that have a
// kernel to choose (K >= 1: a call with K = 0 only scales C), each on at most `cores` threads,
// most time-consuming first.
Result<std::vector<Problem>> RecordedProblemsToTune(const std::string& path, int cores);

}  // namespace mmtune
