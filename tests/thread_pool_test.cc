// The fork-join pool of the GEMM drivers: every member's task and every share runs exactly
// once, barriers hold, and shares that a worker has not started or declines run on the caller.
#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mmtune {
namespace {

TEST(ThreadPoolTest, RunsEveryMemberOnceAndBarriersHold) {
  ThreadPool pool(3);
  ASSERT_EQ(pool.size(), 3);
  for (int round = 0; round < 200; ++round) {
    const int team = 1 + round % 3;
    std::atomic<int> ran{0};
    std::atomic<int> before{0};
    std::atomic<bool> early{false};
    SpinBarrier barrier(team);
    pool.Run(team, [&](int member) {
      ASSERT_LT(member, team);
      ran.fetch_add(1 << (member * 8));
      before.fetch_add(1);
      barrier.ArriveAndWait();
      // Nobody passes the barrier before every member arrived.
      if (before.load() != team) early.store(true);
    });
    int expected = 0;
    for (int member = 0; member < team; ++member) expected += 1 << (member * 8);
    ASSERT_EQ(ran.load(), expected) << "round " << round;
    ASSERT_FALSE(early.load()) << "round " << round;
  }
}

// KeepWarm wakes the workers without work: none runs a task of its own, and Runs before and
// after it, with the workers awake or asleep, still run every member exactly once.
TEST(ThreadPoolTest, KeepWarmGivesNoWorkAndRunsAfterItHold) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  for (int round = 0; round < 100; ++round) {
    pool.KeepWarm();
    if (round % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // asleep
    if (round % 3 == 0) pool.KeepWarm();
    ran.store(0);
    pool.Run(3, [&](int member) { ran.fetch_add(1 << (member * 8)); });
    ASSERT_EQ(ran.load(), 1 + (1 << 8) + (1 << 16)) << "round " << round;
  }
  ran.store(0);
  pool.KeepWarm();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ran.load(), 0);
}

// Shares, mixed with Runs and KeepWarm, workers awake or asleep: each share of every run runs
// exactly once, and the run says so.
TEST(ThreadPoolTest, RunSharesRunsEveryShareExactlyOnce) {
  ThreadPool pool(3);
  for (int round = 0; round < 300; ++round) {
    const int team = 1 + round % 3;
    if (round % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // asleep
    if (round % 5 == 0) pool.KeepWarm();
    std::atomic<int> ran{0};
    const bool done = pool.RunShares(team, [&](int share) {
      EXPECT_GE(share, 0);
      EXPECT_LT(share, team);
      ran.fetch_add(1 << (share * 8));
      return true;
    });
    int expected = 0;
    for (int share = 0; share < team; ++share) expected += 1 << (share * 8);
    ASSERT_TRUE(done) << "round " << round;
    ASSERT_EQ(ran.load(), expected) << "round " << round;
    if (round % 4 == 0) {
      ran.store(0);
      pool.Run(team, [&](int member) { ran.fetch_add(1 << (member * 8)); });
      ASSERT_EQ(ran.load(), expected) << "round " << round;
    }
  }
}

// A worker asleep when a run starts takes tens of microseconds to wake: the caller, done with
// its own share at once, runs the sleeper's share itself.
TEST(ThreadPoolTest, TheCallerRunsASleepingWorkersShare) {
  ThreadPool pool(2);
  int on_caller = 0;
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the workers' spinning
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> ran{0};
    std::atomic<bool> second_on_caller{false};
    ASSERT_TRUE(pool.RunShares(2, [&](int share) {
      ran.fetch_add(1 << (share * 8));
      if (share == 1) second_on_caller.store(std::this_thread::get_id() == caller);
      return true;
    }));
    ASSERT_EQ(ran.load(), 1 + (1 << 8));
    on_caller += second_on_caller.load();
  }
  EXPECT_GT(on_caller, 0);
}

// A share that cannot run on a worker (its scratch memory) runs on the caller after the others,
// once; one the caller declines too fails the run.
TEST(ThreadPoolTest, AShareDeclinedByAWorkerRunsOnTheCaller) {
  ThreadPool pool(3);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 100; ++round) {
    std::atomic<int> ran{0};
    std::atomic<int> declined{0};
    ASSERT_TRUE(pool.RunShares(3, [&](int share) {
      if (std::this_thread::get_id() != caller) {
        declined.fetch_add(1);
        return false;
      }
      ran.fetch_add(1 << (share * 8));
      return true;
    }));
    ASSERT_EQ(ran.load(), 1 + (1 << 8) + (1 << 16)) << "round " << round;
    ASSERT_LE(declined.load(), 2);
  }
  std::atomic<int> tries{0};
  EXPECT_FALSE(pool.RunShares(2, [&](int share) {
    tries.fetch_add(1);
    return share != 1;
  }));
  EXPECT_GE(tries.load(), 3);  // share 1 declined where it ran first, then on the caller
}

}  // namespace
}  // namespace mmtune
