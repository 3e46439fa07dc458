// Whether one problem's multi-threaded plan runs on its team or alone on the calling thread,
// decided by timing both as the application runs them. In a tight loop the team wins; inside an
// application a member's core may be held by other work (another library's OpenMP threads
// spinning after their call, the caller itself right after a migration), and a team waits for
// its slowest member, so it can take longer than one thread (docs/runtime.md, "Threads").
//
// Each call runs the mode with the lower recent time; every `explore_every` calls (kMaxExplore
// for long calls) it runs the other mode three times and keeps the faster of the last two, since a
// team called after a streak of calls alone finds its worker asleep and its caches cold. The pool's
// first call (it starts the workers) is not kept, and a single slow call (a preemption) moves the
// smoothed time of the running mode by at most an eighth of it. The interval doubles, up to
// kMaxExplore, each time the other mode is confirmed slower, and falls back to kMinExplore when it
// was faster, so a steady machine spends about 3/kMaxExplore of its calls on the slower mode and a
// change is noticed within kMinExplore calls. Calls may come from any number of threads: the
// estimates are relaxed atomics, updated without a lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <type_traits>

namespace mmtune {

class TeamOrAlone {
 public:
  static constexpr std::uint32_t kMinExplore = 8;
  static constexpr std::uint32_t kMaxExplore = 256;
  // A team call at least this long explores every kMaxExplore calls only: what running alone
  // dodges (a member's core taken for a scheduler time slice, or for the milliseconds another
  // library's OpenMP threads spin) costs such a call a small share of the team's lead, while
  // each exploration costs it whole calls at one thread's speed.
  static constexpr std::int64_t kLongCallNs = 10'000'000;

  struct Choice {
    bool team = true;
    bool explore = false;  // this call runs the mode not preferred, to time it
    bool record = true;    // its time counts (not a warm-up)
    bool last = false;     // the last call of an exploration: the choice is made again after it
  };

  Choice Choose() const {
    const std::uint32_t call = calls_.fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t every =
        team_ns() >= kLongCallNs ? kMaxExplore : explore_every_.load(std::memory_order_relaxed);
    const bool prefer_team = PreferTeam();
    const std::uint32_t phase = call % every;
    if (phase == every - 3) return Choice{!prefer_team, false, false, false};
    if (phase == every - 2) return Choice{!prefer_team, true, true, false};
    if (phase == every - 1) return Choice{!prefer_team, true, true, true};
    return Choice{prefer_team, false, call != 0, false};
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
    if (!choice.record) return;
    ns = std::max<std::int64_t>(1, ns);
    std::atomic<std::int64_t>& estimate = choice.team ? team_ns_ : alone_ns_;
    const std::int64_t old = estimate.load(std::memory_order_relaxed);
    std::int64_t updated = 0;
    if (old == 0) {
      updated = ns;
    } else if (choice.explore) {
      // A mode timed once in a while takes its new time whole (the faster of its two).
      updated = choice.last ? std::min(old, ns) : ns;
    } else {
      updated = old + (std::min(ns, 2 * old) - old) / 8;
    }
    estimate.store(updated, std::memory_order_relaxed);
    if (!choice.last) return;
    const bool confirmed = PreferTeam() != choice.team;  // the explored mode stayed slower
    const std::uint32_t every = explore_every_.load(std::memory_order_relaxed);
    explore_every_.store(confirmed ? std::min(every * 2, kMaxExplore) : kMinExplore,
                         std::memory_order_relaxed);
  }

  // The current estimates (0: not timed yet) and exploration interval, for tests.
  std::int64_t team_ns() const { return team_ns_.load(std::memory_order_relaxed); }
  std::int64_t alone_ns() const { return alone_ns_.load(std::memory_order_relaxed); }
  std::uint32_t explore_every() const { return explore_every_.load(std::memory_order_relaxed); }

 private:
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

  mutable std::atomic<std::int64_t> team_ns_{0};
  mutable std::atomic<std::int64_t> alone_ns_{0};
  mutable std::atomic<std::uint32_t> calls_{0};
  mutable std::atomic<std::uint32_t> explore_every_{kMinExplore};
};

}  // namespace mmtune
