// Whether one problem's multi-threaded plan runs on its team or alone on the calling thread,
// decided by timing both as the application runs them. In a tight loop the team wins; inside an
// application a member's core may be held by other work (another library's OpenMP threads
// spinning after their call, the caller itself right after a migration), and a team waits for
// its slowest member, so it can take longer than one thread (docs/runtime.md, "Threads").
//
// Each call runs the mode with the lower recent time; now and then an exploration times the
// other. Both modes run slow for a few calls after a switch (each core's caches hold half of
// the problem), and a team whose workers slept takes a wake-up on top, so an exploration alone
// is three calls (a warm-up, then two timed) with the workers kept spinning for the team's
// return, and an exploration of the team wakes its workers a few calls alone ahead, then runs
// up to kMaxTeamWarmUps untimed calls before two timed ones (a warm-up far slower than alone
// ends it). The faster of the two timed calls is kept, and the calls just after an exploration
// or a swap of the modes are not timed. The pool's first call (it starts the workers) is not
// kept either, and a single slow call (a preemption) moves the smoothed time of the running mode
// by at most an eighth of it.
//
// The interval doubles, up to kMaxExplore calls (kMaxExploreAlone while the team holds), each
// time the other mode is confirmed slower, and falls back to kMinExplore when it was faster or
// the smoothed times swapped the modes; a held choice explores kExploreSpacingNs of calls apart
// where that is more calls, since each exploration costs a few slow calls after it. Calls of
// kLongCallNs or more explore kMaxExplore calls apart or more from the start, and a problem
// whose first exploration comes while the last verdict of the process's problems (TeamVerdict)
// is for the team puts it off as long. Calls may come from any number of threads: the
// estimates are relaxed atomics, updated without a lock.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace mmtune {

// Whether the last exploration or swap of any problem sharing it found the team faster than
// the calling thread alone. A problem whose first exploration comes while the verdict is for
// the team puts it off by kMaxExplore calls: where teams pay on this machine, every new problem
// (each new M of variable-length inputs) would otherwise run a few calls of its first ten or
// thirty alone, for nothing. It explores at the next interval whatever the verdict, so that a
// team that turns slow can give way, and a verdict against the team leaves the short intervals.
class TeamVerdict {
 public:
  void Record(bool team_faster) const {
    team_faster_.store(team_faster, std::memory_order_relaxed);
  }
  bool TeamFaster() const { return team_faster_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<bool> team_faster_{false};
};

// The process's verdict: its problems share one pool of workers, and so the cores' state.
inline const TeamVerdict& ProcessTeamVerdict() {
  static const TeamVerdict verdict;
  return verdict;
}

class TeamOrAlone {
 public:
  static constexpr std::uint32_t kMinExplore = 8;
  static constexpr std::uint32_t kMaxExplore = 256;
  // The most calls between explorations alone while the team holds. Each costs about three calls
  // at one thread's speed, a third of a percent of 1024 calls of a team of two, and only
  // refreshes the time alone: a team that turns slow gives way through its own calls' times.
  static constexpr std::uint32_t kMaxExploreAlone = 1024;
  // A team call at least this long explores kMaxExplore calls apart at least: what running alone
  // dodges (a member's core taken for a scheduler time slice, or for the milliseconds another
  // library's OpenMP threads spin) costs such a call a small share of the team's lead, while
  // each exploration costs it whole calls at one thread's speed.
  static constexpr std::int64_t kLongCallNs = 10'000'000;
  // The least time between explorations once the choice has held kMaxExplore calls.
  static constexpr std::int64_t kExploreSpacingNs = 4'000'000;
  // How long before its first call an explored team wakes its workers (a sleeping worker's
  // wake-up on a virtual machine), in calls alone: at least one, at most kMaxWakeCalls.
  static constexpr std::int64_t kWakeNs = 60'000;
  static constexpr std::uint32_t kMaxWakeCalls = 16;
  // The explored team's untimed calls before its two timed ones: kTeamWarmUpNs of calls (its
  // first calls' slowness passes after about that long), at least one, at most kMaxTeamWarmUps.
  static constexpr std::int64_t kTeamWarmUpNs = 60'000;
  static constexpr std::uint32_t kMaxTeamWarmUps = 6;
  // A warming-up team call slower than this many calls alone (beyond a wake-up) ends the
  // exploration: the team is slower.
  static constexpr std::int64_t kAbandonFactor = 4;
  // The calls after an exploration or a swap of the modes that are not timed.
  static constexpr std::uint32_t kSettleCalls = 6;

  TeamOrAlone() = default;
  // Recording into and putting off its first exploration by `verdict` (null: neither).
  explicit TeamOrAlone(const TeamVerdict* verdict) : verdict_(verdict) {}

  struct Choice {
    bool team = true;
    bool explore = false;    // this call runs the mode not preferred, to time it (or warm it)
    bool record = true;      // its time counts (not a warm-up)
    bool last = false;       // the last call of an exploration: the choice is made again after it
    bool keep_warm = false;  // alone, with the team's workers woken or kept spinning meanwhile
  };

  Choice Choose() const {
    const std::uint32_t call = calls_.fetch_add(1, std::memory_order_relaxed);
    const bool prefer_team = PreferTeam();
    const std::uint32_t length = ExplorationLength(prefer_team);
    const std::uint32_t every = Interval(prefer_team, length);
    const std::uint32_t until_end = every - call % every;  // 1 on an exploration's last call
    if (until_end > length || (until_end == length && PutOffFirstExploration(prefer_team))) {
      // The first calls after an exploration, or after the modes swapped, run slow (caches):
      // untimed, or they would swap the modes again.
      const bool settled =
          static_cast<std::int32_t>(call - settle_until_.load(std::memory_order_relaxed)) >= 0;
      return Choice{prefer_team, false, call != 0 && settled, false, false};
    }
    if (until_end == 1) settle_until_.store(call + 1 + kSettleCalls, std::memory_order_relaxed);
    const bool timed = until_end <= 2;
    if (prefer_team) return Choice{false, timed, timed, until_end == 1, true};
    const std::uint32_t warm_ups = TeamWarmUps();
    if (until_end > warm_ups + 2) return Choice{false, false, false, false, true};
    if (until_end == warm_ups + 2) {
      abandoned_.store(false, std::memory_order_relaxed);
    } else if (abandoned_.load(std::memory_order_relaxed)) {
      return Choice{false, false, false, false, false};
    }
    return Choice{true, true, timed, until_end == 1, false};
  }

  // Runs `run()` as `choice` says it was chosen and times it.
  template <class Run>
  [[gnu::always_inline]] inline auto Timed(Choice choice, Run&& run) const {
    const auto start = std::chrono::steady_clock::now();
    if constexpr (std::is_void_v<decltype(run())>) {
      run();
      Note(choice, NanosecondsSince(start));
    } else {
      auto result = run();
      Note(choice, NanosecondsSince(start));
      return result;
    }
  }

  // A call made as `choice` took `ns` nanoseconds (what Timed does after the call).
  void Note(Choice choice, std::int64_t ns) const {
    if (!choice.record) {
      // A team warming up far slower than its caches explain has a member's core taken: the
      // exploration stops there, the team confirmed slower.
      const std::int64_t alone = alone_ns();
      if (choice.team && choice.explore && alone > 0 && ns > kAbandonFactor * alone + kWakeNs) {
        abandoned_.store(true, std::memory_order_relaxed);
        team_ns_.store(std::max(team_ns(), ns), std::memory_order_relaxed);
        const std::uint32_t every = explore_every_.load(std::memory_order_relaxed);
        explore_every_.store(std::min(every * 2, kMaxExplore), std::memory_order_relaxed);
      }
      return;
    }
    ns = std::max<std::int64_t>(1, ns);
    std::atomic<std::int64_t>& estimate = choice.team ? team_ns_ : alone_ns_;
    const std::int64_t old = estimate.load(std::memory_order_relaxed);
    if (choice.explore && !choice.last) {
      // The estimates stay as they are until the exploration's last call, so that every call
      // of it sees the same preference.
      explored_ns_.store(ns, std::memory_order_relaxed);
      return;
    }
    const bool preferred_team = PreferTeam();
    std::int64_t updated = 0;
    if (choice.explore) {
      // A mode timed once in a while takes its new time whole (the faster of its two).
      const std::int64_t first = explored_ns_.exchange(0, std::memory_order_relaxed);
      updated = first > 0 ? std::min(first, ns) : ns;
    } else if (old == 0) {
      updated = ns;
    } else {
      updated = old + (std::min(ns, 2 * old) - old) / 8;
    }
    estimate.store(updated, std::memory_order_relaxed);
    if (!choice.explore) {
      // The running mode's own calls swapped the preference: check the other soon.
      if (PreferTeam() != preferred_team) {
        explore_every_.store(kMinExplore, std::memory_order_relaxed);
        settle_until_.store(calls_.load(std::memory_order_relaxed) + kSettleCalls,
                            std::memory_order_relaxed);
        RecordVerdict();
      }
      return;
    }
    const bool confirmed = PreferTeam() != choice.team;  // the explored mode stayed slower
    const std::uint32_t every = explore_every_.load(std::memory_order_relaxed);
    const std::uint32_t most = choice.team ? kMaxExplore : kMaxExploreAlone;
    explore_every_.store(confirmed ? std::min(every * 2, most) : kMinExplore,
                         std::memory_order_relaxed);
    RecordVerdict();
  }

  // The current estimates (0: not timed yet) and exploration interval, for tests.
  std::int64_t team_ns() const { return team_ns_.load(std::memory_order_relaxed); }
  std::int64_t alone_ns() const { return alone_ns_.load(std::memory_order_relaxed); }
  std::uint32_t explore_every() const { return explore_every_.load(std::memory_order_relaxed); }

 private:
  // `ns` of calls alone, in calls: at least one, at most `most`.
  std::uint32_t CallsAlone(std::int64_t ns, std::uint32_t most) const {
    const std::int64_t alone = std::max<std::int64_t>(1, alone_ns());
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>((ns + alone - 1) / alone, 1, most));
  }
  std::uint32_t TeamWarmUps() const { return CallsAlone(kTeamWarmUpNs, kMaxTeamWarmUps); }

  // The calls of an exploration of the other mode (see the class comment).
  std::uint32_t ExplorationLength(bool prefer_team) const {
    if (prefer_team) return 3;
    return CallsAlone(kWakeNs, kMaxWakeCalls) + TeamWarmUps() + 2;
  }

  // Calls from one exploration to the next: a power of two, so that the small changes of the
  // estimates that stretch it move no call in or out of an exploration.
  std::uint32_t Interval(bool prefer_team, std::uint32_t length) const {
    std::uint32_t every = explore_every_.load(std::memory_order_relaxed);
    const std::int64_t running = prefer_team ? team_ns() : alone_ns();
    if (team_ns() >= kLongCallNs) {
      every = std::max(every, kMaxExplore);
    } else if (every >= kMaxExplore && running > 0) {
      every = static_cast<std::uint32_t>(std::max<std::int64_t>(
          every, std::min<std::int64_t>(kExploreSpacingNs / running, std::int64_t{1} << 20)));
    }
    // The preferred mode runs at least half the calls even at the shortest interval.
    return std::bit_ceil(std::max(every, 2 * length));
  }

  // At the first call of the first exploration alone, with the verdict for the team: true, and
  // the next comes kMaxExplore calls on (once only: see TeamVerdict).
  bool PutOffFirstExploration(bool prefer_team) const {
    if (!prefer_team || alone_ns() != 0 || verdict_ == nullptr || !verdict_->TeamFaster() ||
        put_off_.exchange(true, std::memory_order_relaxed)) {
      return false;
    }
    explore_every_.store(kMaxExplore, std::memory_order_relaxed);
    return true;
  }

  // Both modes timed: the preference is a verdict.
  void RecordVerdict() const {
    if (verdict_ != nullptr && team_ns() > 0 && alone_ns() > 0) verdict_->Record(PreferTeam());
  }

  bool PreferTeam() const {
    const std::int64_t team = team_ns();
    const std::int64_t alone = alone_ns();
    return team == 0 || alone == 0 || team <= alone;
  }

  static std::int64_t NanosecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - start)
        .count();
  }

  const TeamVerdict* verdict_ = nullptr;
  mutable std::atomic<std::int64_t> team_ns_{0};
  mutable std::atomic<std::int64_t> alone_ns_{0};
  mutable std::atomic<std::uint32_t> calls_{0};
  mutable std::atomic<std::uint32_t> explore_every_{kMinExplore};
  mutable std::atomic<std::int64_t> explored_ns_{0};    // the exploration's first timed call
  mutable std::atomic<std::uint32_t> settle_until_{0};  // the first call timed again
  mutable std::atomic<bool> abandoned_{false};          // the team's exploration stopped early
  mutable std::atomic<bool> put_off_{false};            // the first exploration was put off
};

// Team-or-alone timing per band of M, for calls of one operand that run any M (packed weights):
// a call's time grows with its rows, and timings of different M in one estimate would compare
// a team's large calls with the calling thread's small ones. Four bands an octave, so that the
// rows within one differ by less than a fifth.
class TeamOrAloneByRows {
 public:
  static constexpr int kBandsPerOctave = 4;
  static constexpr int kBands = 24 * kBandsPerOctave;  // up to 2^24 rows; more share the last

  explicit TeamOrAloneByRows(const TeamVerdict* verdict) {
    for (std::optional<TeamOrAlone>& band : bands_) band.emplace(verdict);
  }

  const TeamOrAlone& For(std::int64_t rows) const { return *bands_[Band(rows)]; }

  // The band of `rows` (>= 1; less counts as 1).
  static int Band(std::int64_t rows) {
    const auto r = static_cast<std::uint64_t>(std::max<std::int64_t>(rows, 1));
    const int octave = std::bit_width(r) - 1;
    const auto quarter = static_cast<int>(((r << 2) >> octave) & 3);  // of r / 2^octave's fraction
    return std::min(octave * kBandsPerOctave + quarter, kBands - 1);
  }

 private:
  std::array<std::optional<TeamOrAlone>, kBands> bands_;
};

}  // namespace mmtune
