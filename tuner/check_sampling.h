// Which rows and columns of C the result checkers compare exactly when a problem is too large to
// check in full (result_checker.h, s8_result_checker.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace mmtune {

// Problems up to this many multiply-adds (and C elements) are checked in full: recomputing more
// of C than that would take longer than tuning.
inline constexpr double kFullCheckMacs = 1 << 26;
inline constexpr std::int64_t kFullCheckElements = 1 << 22;

inline bool ChecksInFull(std::int64_t m, std::int64_t n, std::int64_t k) {
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <=
             kFullCheckMacs &&
         m * n <= kFullCheckElements;
}

// The rows (all of them in full mode) and columns (none in full mode) the checkers compare
// exactly, for the checker seeded with `rng`.
struct CheckedLines {
  std::vector<std::int64_t> rows, cols;
};

// Whole rows (or columns) to check exactly: the first two, the middle, the last two (the edge
// tiles), and a few random ones; all of them when `all` is set.
inline std::vector<std::int64_t> SampleCheckIndices(std::int64_t count, bool all,
                                                    std::mt19937_64& rng) {
  std::set<std::int64_t> picked;
  if (all) {
    for (std::int64_t i = 0; i < count; ++i) picked.insert(i);
  } else if (count > 0) {
    for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, count / 2, count - 2, count - 1}) {
      picked.insert(std::clamp<std::int64_t>(i, 0, count - 1));
    }
    for (int r = 0; r < 6; ++r) {
      picked.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(count)));
    }
  }
  return {picked.begin(), picked.end()};
}

inline CheckedLines PickCheckedLines(std::int64_t m, std::int64_t n, bool full,
                                     std::mt19937_64& rng) {
  CheckedLines lines;
  lines.rows = SampleCheckIndices(m, full, rng);
  if (!full) lines.cols = SampleCheckIndices(n, false, rng);
  return lines;
}

}  // namespace mmtune
