// A persistent fork-join pool for the GEMM drivers. Workers are created once; the calling thread
// always acts as member 0, so a team of one runs inline with no synchronization at all.
//
// Workers are not pinned to fixed cores: the caller is the application's thread and goes
// wherever the scheduler puts it, which can be a pinned worker's core, and the two then share it
// until the scheduler moves one. Instead a worker that finds itself on
// the caller's CPU when a Run starts moves to the process's other CPUs, for as long as the
// caller stays there (docs/runtime.md, "Threads"). Idle workers spin briefly (kSpins pauses,
// about a tenth of a millisecond) and then sleep, so they hold no core for long.
//
// Work whose members share nothing runs as claimable shares (RunShares): the caller runs every
// share that no worker has started by the time it is free, so a worker that the scheduler keeps
// off its core (another library's threads spin-waiting there after their call) costs the call
// one share's time on the caller, not the milliseconds until the worker runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "machine/cpu_binding.h"

namespace mmtune {

// A reusable barrier for the members of one team; spins briefly, then yields.
class SpinBarrier {
 public:
  explicit SpinBarrier(int members) : members_(members) {}
  void ArriveAndWait();

 private:
  const int members_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint32_t> generation_{0};
};

// Members that each acquire scratch memory before writing any output agree on whether all of
// them got it: each calls Agree once with its own outcome and all get the same answer, so either
// every member goes on or none touches the output.
class TeamVote {
 public:
  explicit TeamVote(int members) : barrier_(members) {}
  bool Agree(bool ok) {
    if (!ok) failed_.store(true, std::memory_order_relaxed);
    barrier_.ArriveAndWait();  // orders every member's vote before every member's read
    return !failed_.load(std::memory_order_relaxed);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  SpinBarrier barrier_;
  std::atomic<bool> failed_{false};
};

// A non-owning reference to a callable `R(int)`: no allocation, unlike std::function, which
// matters when a small GEMM costs less than a heap allocation.
template <typename R>
class MemberTaskRef {
 public:
  // Valid while `f` lives: pass it straight to ThreadPool::Run (a temporary lives until Run
  // returns).
  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, MemberTaskRef>)
  MemberTaskRef(F&& f)  // NOLINT: implicit by design, like std::function_ref
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* object, int member) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(member);
        }) {}
  R operator()(int member) const { return call_(object_, member); }

 private:
  void* object_;
  R (*call_)(void*, int);
};

// Member `member`'s part of a team's work.
using TaskRef = MemberTaskRef<void>;
// Share `share` of a RunShares: true when it ran, false when it could not run on this thread
// (its scratch memory could not be had) and wrote nothing.
using ShareRef = MemberTaskRef<bool>;

class ThreadPool {
 public:
  // `threads` members in all: the caller plus threads - 1 workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(0) .. task(team - 1) concurrently (team <= size()) and returns when all are done.
  // Not reentrant: one Run at a time per pool (callers serialize; the drivers never nest).
  void Run(int team, TaskRef task);

  // Runs share(0) .. share(team - 1) (team <= size()), each exactly once, on whichever member
  // claims it first: the caller takes share 0, then any share no worker has claimed, then waits
  // for the claimed ones. For shares that share nothing (no barrier between them). A share a
  // worker declines (false) runs on the caller after the others; false where the caller's
  // declines too. Serialized with Run like Run itself.
  bool RunShares(int team, ShareRef share);

  // Wakes idle workers without giving them work, and has spinning ones spin kSpins pauses more,
  // so that a Run soon after finds them awake. Serialized with Run like Run itself.
  void KeepWarm();

 private:
  void WorkerLoop(int index);
  // Publishes the next generation with a team of `team` (1: no worker takes part; with
  // kSharesBit, a RunShares) and wakes every worker.
  void StartGeneration(std::uint32_t team);
  // The next unclaimed share of RunShares generation `generation` of `team` shares, or -1.
  int ClaimShare(std::uint32_t generation, int team);
  // Runs shares of generation `generation` until none is left to claim.
  void RunClaimedShares(std::uint32_t generation, int team);

  static constexpr std::uint32_t kSharesBit = 1u << 31;

  const CpuAffinity allowed_;  // the creating thread's CPUs; before the workers, which read it
  std::vector<std::thread> workers_;
  const TaskRef* task_ = nullptr;
  std::atomic<int> caller_cpu_{-1};  // the CPU of the caller of the Run in progress
  // Generation (high 32 bits) and team size (low 32 bits) in one word, so that a worker waking
  // late can never pair one Run's generation with another Run's team.
  std::atomic<std::uint64_t> state_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  // RunShares: its shares, the generation (high 32 bits) and next unclaimed share (low 32 bits)
  // in one word, so that a worker waking late claims nothing of a later run; the shares done
  // (declined ones included) and which were declined, one flag per member.
  const ShareRef* shares_ = nullptr;
  std::atomic<std::uint64_t> claims_{0};
  std::atomic<int> shares_done_{0};
  std::unique_ptr<std::atomic<bool>[]> declined_;
};

// The process-wide pool, one member per core of this machine, created on first use.
ThreadPool& DefaultThreadPool();

}  // namespace mmtune
