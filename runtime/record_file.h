// The record file: the GEMM problems an application asked the runtime for that had no exact
// winner, with how often and how long they ran, so that `mmtune tune --from-record FILE` can tune
// what matters most first. A small JSON document (docs/runtime.md shows it):
//
//   {"mmtune_record": 1, "problems": [{"dtype": "f32", "layout": "row", "trans": "NN",
//     "m": 128, "n": 768, "k": 768, "threads": 2, "calls": 4096, "seconds": 1.93}, ...]}
//
// A batch of a count that `tune --batch` tuned (its winner not exact for the call) adds
// "form": "batch:B", so that `tune --from-record` tunes it as a batch.
//
// Several processes (or runs) may record into one file: each write merges its counts into what
// the file already holds, under an advisory lock, and replaces the file atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

struct RecordedProblem {
  Problem problem;
  std::uint64_t calls = 0;
  double seconds = 0.0;  // wall time spent in those calls
};

// The file's problems, most time-consuming first. A missing file is kNotFound; anything that is
// not a record file of this version is kCorrupt.
Result<std::vector<RecordedProblem>> ReadRecordFile(const std::string& path);

// Adds `recorded` to the file's counts (creating it when missing). A file that exists but is not
// a record file is left alone and reported as kCorrupt: recording must never destroy data.
Status MergeIntoRecordFile(const std::string& path, const std::vector<RecordedProblem>& recorded);

}  // namespace mmtune
