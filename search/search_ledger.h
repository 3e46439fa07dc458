// What a strategy has asked for and learned so far: which indices it proposed, which results came
// back, the best result, and which indices are still unproposed (for random picks in O(1)). Every
// strategy keeps one; the hill climber and the evolution that `local`, `evolutionary` and `auto`
// are built from share their strategy's ledger, so neither proposes what the other already did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "search/search_random.h"

namespace mmtune {

class SearchLedger {
 public:
  explicit SearchLedger(std::size_t size);

  std::size_t size() const { return state_.size(); }
  bool proposed(std::size_t index) const { return state_[index] != State::kUnproposed; }
  bool observed(std::size_t index) const { return state_[index] == State::kObserved; }
  // The score of an observed index; nullopt when it failed or has no result yet.
  std::optional<double> score(std::size_t index) const;
  bool has_score(std::size_t index) const { return score(index).has_value(); }
  std::size_t pending() const { return pending_; }
  bool exhausted() const { return unproposed_.empty(); }
  std::size_t proposed_count() const { return size() - unproposed_.size(); }

  // Whether `a` is a better result than `b`: only scored indices compete, and equal scores go to
  // the lower index, so the answer does not depend on the order results arrived in.
  bool Better(std::size_t a, std::size_t b) const;
  // The best scored index so far.
  std::optional<std::size_t> best() const { return best_; }

  // Records a proposal; the index must not have been proposed before.
  void MarkProposed(std::size_t index);
  // Records a result. Results for indices never proposed, or already observed, are ignored: a
  // strategy's state must not depend on a caller's mistake.
  void Record(std::size_t index, std::optional<double> score);

  // A uniformly random unproposed index, or nullopt when the space is exhausted.
  std::optional<std::size_t> RandomUnproposed(SearchRandom& random) const;

  // Every observed index in the order results arrived; components fold in what is new since
  // they last looked.
  const std::vector<std::size_t>& observation_log() const { return observation_log_; }

 private:
  enum class State : std::uint8_t { kUnproposed, kPending, kObserved };

  std::vector<State> state_;
  std::vector<double> scores_;
  std::vector<bool> failed_;
  std::size_t pending_ = 0;
  std::optional<std::size_t> best_;
  // The unproposed indices in no particular order, and each index's position there.
  std::vector<std::uint32_t> unproposed_;
  std::vector<std::uint32_t> position_;
  std::vector<std::size_t> observation_log_;
};

}  // namespace mmtune
