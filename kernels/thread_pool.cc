#include "kernels/thread_pool.h"

#include <algorithm>
#include <mutex>

#include "machine/cpu_binding.h"

namespace mmtune {
namespace {

// Spins `kSpins` times before yielding: GEMM phases are microseconds apart, and a futex wake-up
// costs more than that.
constexpr int kSpins = 4000;

inline void Relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

template <typename Predicate>
void SpinUntil(Predicate done) {
  for (int i = 0; !done(); ++i) {
    if (i < kSpins) {
      Relax();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

void SpinBarrier::ArriveAndWait() {
  if (members_ <= 1) return;
  const std::uint32_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == members_) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  SpinUntil([&] { return generation_.load(std::memory_order_acquire) != generation; });
}

ThreadPool::ThreadPool(int threads)
    : allowed_(CpuAffinity::OfCurrentThread()),
      declined_(std::make_unique<std::atomic<bool>[]>(
          static_cast<std::size_t>(std::max(1, threads)))) {
  const int workers = std::max(0, threads - 1);
  workers_.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this, i] { WorkerLoop(i + 1); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  state_.fetch_add(std::uint64_t{1} << 32, std::memory_order_acq_rel);
  state_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::WorkerLoop(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    // Spin a little for back-to-back GEMM calls, then sleep.
    for (int i = 0; i < kSpins && state_.load(std::memory_order_acquire) == seen; ++i) Relax();
    state_.wait(seen, std::memory_order_acquire);
    seen = state_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    const auto low = static_cast<std::uint32_t>(seen & 0xFFFFFFFFu);
    const bool shares = (low & kSharesBit) != 0;
    const int team = static_cast<int>(low & ~kSharesBit);
    if (index < team) {
      // Off the caller's CPU, should the scheduler have put this worker there.
      const int caller_cpu = caller_cpu_.load(std::memory_order_relaxed);
      if (caller_cpu >= 0 && CurrentCpu() == caller_cpu) allowed_.MoveCurrentThreadOff(caller_cpu);
      if (shares) {
        RunClaimedShares(static_cast<std::uint32_t>(seen >> 32), team);
      } else {
        // A member of this Run: the caller waits for us before it can start another one, so
        // `task_` stays valid until we decrement `pending_`.
        (*task_)(index);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }
}

void ThreadPool::Run(int team, TaskRef task) {
  team = std::clamp(team, 1, size());
  if (team == 1) {
    task(0);
    return;
  }
  task_ = &task;
  caller_cpu_.store(CurrentCpu(), std::memory_order_relaxed);
  pending_.store(team - 1, std::memory_order_relaxed);
  StartGeneration(static_cast<std::uint32_t>(team));
  task(0);
  SpinUntil([&] { return pending_.load(std::memory_order_acquire) == 0; });
}

bool ThreadPool::RunShares(int team, ShareRef share) {
  team = std::clamp(team, 1, size());
  if (team == 1) return share(0);
  shares_ = &share;
  for (int i = 0; i < team; ++i) declined_[i].store(false, std::memory_order_relaxed);
  shares_done_.store(0, std::memory_order_relaxed);
  const auto generation =
      static_cast<std::uint32_t>((state_.load(std::memory_order_relaxed) >> 32) + 1);
  claims_.store(std::uint64_t{generation} << 32 | 1, std::memory_order_relaxed);  // 0: ours
  caller_cpu_.store(CurrentCpu(), std::memory_order_relaxed);
  StartGeneration(static_cast<std::uint32_t>(team) | kSharesBit);  // publishes the above
  if (!share(0)) declined_[0].store(true, std::memory_order_relaxed);
  int done = 1;
  for (int next; (next = ClaimShare(generation, team)) >= 0; ++done) {
    if (!share(next)) declined_[next].store(true, std::memory_order_relaxed);
  }
  shares_done_.fetch_add(done, std::memory_order_acq_rel);
  SpinUntil([&] { return shares_done_.load(std::memory_order_acquire) == team; });
  bool ran = true;
  for (int i = 0; i < team; ++i) {
    if (declined_[i].load(std::memory_order_relaxed)) ran = share(i) && ran;
  }
  return ran;
}

int ThreadPool::ClaimShare(std::uint32_t generation, int team) {
  std::uint64_t word = claims_.load(std::memory_order_acquire);
  for (;;) {
    const auto next = static_cast<int>(word & 0xFFFFFFFFu);
    if (static_cast<std::uint32_t>(word >> 32) != generation || next >= team) return -1;
    if (claims_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      return next;
    }
  }
}

void ThreadPool::RunClaimedShares(std::uint32_t generation, int team) {
  // A claimed share keeps its run's caller waiting, so `shares_` is that run's until it is done.
  for (int next; (next = ClaimShare(generation, team)) >= 0;) {
    if (!(*shares_)(next)) declined_[next].store(true, std::memory_order_relaxed);
    shares_done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

// A generation whose team is the caller alone: every worker wakes, takes no part and spins.
void ThreadPool::KeepWarm() { StartGeneration(1); }

void ThreadPool::StartGeneration(std::uint32_t team) {
  const std::uint64_t generation = (state_.load(std::memory_order_relaxed) >> 32) + 1;
  state_.store((generation << 32) | team, std::memory_order_release);
  state_.notify_all();
}

ThreadPool& DefaultThreadPool() {
  static ThreadPool pool(std::max(1, AllowedCoreCount()));
  return pool;
}

}  // namespace mmtune
