// The runtime's choice between a multi-threaded plan's team and the calling thread alone, fed
// with call times instead of timing real calls.
#include "runtime/team_or_alone.h"

#include <gtest/gtest.h>

namespace mmtune {
namespace {

// Makes `calls` calls, each taking `team_ns` on the team or `alone_ns` alone; returns how many
// ran on the team.
int MakeCalls(const TeamOrAlone& choice, int calls, std::int64_t team_ns, std::int64_t alone_ns) {
  int on_team = 0;
  for (int i = 0; i < calls; ++i) {
    const TeamOrAlone::Choice chosen = choice.Choose();
    on_team += chosen.team;
    choice.Note(chosen, chosen.team ? team_ns : alone_ns);
  }
  return on_team;
}

TEST(TeamOrAloneTest, TheTeamRunsWhileItIsFasterAndExploresLessAndLess) {
  const TeamOrAlone choice;
  const int on_team = MakeCalls(choice, 2000, 300, 500);
  EXPECT_EQ(choice.explore_every(), TeamOrAlone::kMaxExplore);
  // Three of every kMaxExplore calls alone once the interval has grown, a few more before.
  EXPECT_GE(on_team, 2000 - 3 * (3 + 2000 / 256) - 3 * 5);
  EXPECT_LT(on_team, 2000);
  EXPECT_EQ(choice.alone_ns(), 500);
}

// A call of 20 ms on the team explores the calling thread alone every kMaxExplore calls from
// its first timed call on, not every kMinExplore.
TEST(TeamOrAloneTest, LongCallsExploreRarelyFromTheStart) {
  const TeamOrAlone choice;
  const int on_team = MakeCalls(choice, 1000, 20'000'000, 40'000'000);
  EXPECT_GE(on_team, 1000 - 3 * (1000 / static_cast<int>(TeamOrAlone::kMaxExplore)));
  EXPECT_LT(on_team, 1000);
  // Shorter calls explore as before: three of the first kMinExplore calls run alone.
  const TeamOrAlone short_calls;
  EXPECT_EQ(MakeCalls(short_calls, TeamOrAlone::kMinExplore, 9'000'000, 18'000'000),
            static_cast<int>(TeamOrAlone::kMinExplore) - 3);
}

TEST(TeamOrAloneTest, ASlowTeamGivesWayWithinAFewCallsAndComesBack) {
  const TeamOrAlone choice;
  MakeCalls(choice, 600, 300, 500);
  // Another library's threads take a core: the team takes 1000 ns from now on.
  const int on_team = MakeCalls(choice, 100, 1000, 500);
  EXPECT_LE(on_team, 12);  // the smoothed team time passes 500 after a handful of calls
  EXPECT_LT(choice.alone_ns(), choice.team_ns());
  // The exploration interval grows while the team stays slow, but calls keep going alone.
  const int later = MakeCalls(choice, 1000, 1000, 500);
  EXPECT_LE(later, 3 * (1000 / 8));
  EXPECT_GT(choice.explore_every(), TeamOrAlone::kMinExplore);
  // The core is free again: the next exploration of the team brings it back.
  MakeCalls(choice, 2 * TeamOrAlone::kMaxExplore, 300, 500);
  EXPECT_LT(choice.team_ns(), choice.alone_ns());
  EXPECT_GE(MakeCalls(choice, 50, 300, 500), 50 - 3 * (50 / 8 + 1));
}

TEST(TeamOrAloneTest, WarmUpsAndTheFirstCallAreNotTimed) {
  const TeamOrAlone choice;
  // The first call starts the pool's workers: however long it takes, it is not kept.
  TeamOrAlone::Choice first = choice.Choose();
  EXPECT_TRUE(first.team);
  EXPECT_FALSE(first.record);
  choice.Note(first, 1'000'000);
  EXPECT_EQ(choice.team_ns(), 0);
  // An exploration of the other mode is three calls; the first is not kept, and the faster of
  // the other two is.
  for (std::uint32_t call = 1; call < TeamOrAlone::kMinExplore - 3; ++call) {
    const TeamOrAlone::Choice chosen = choice.Choose();
    EXPECT_TRUE(chosen.team);
    choice.Note(chosen, 300);
  }
  const TeamOrAlone::Choice warm_up = choice.Choose();
  EXPECT_FALSE(warm_up.team);
  EXPECT_FALSE(warm_up.record);
  choice.Note(warm_up, 5'000);  // cold caches, a sleeping worker: not kept
  for (std::int64_t ns : {700, 500}) {
    const TeamOrAlone::Choice timed = choice.Choose();
    EXPECT_FALSE(timed.team);
    EXPECT_TRUE(timed.explore);
    choice.Note(timed, ns);
  }
  EXPECT_EQ(choice.alone_ns(), 500);
  EXPECT_EQ(choice.team_ns(), 300);
  EXPECT_EQ(choice.explore_every(), 2 * TeamOrAlone::kMinExplore);  // the team stayed faster
}

// One preempted call does not make the team look slower than one thread.
TEST(TeamOrAloneTest, OneSlowCallMovesTheEstimateByAnEighthAtMost) {
  const TeamOrAlone choice;
  MakeCalls(choice, 100, 300, 400);
  ASSERT_EQ(choice.team_ns(), 300);
  const TeamOrAlone::Choice chosen = choice.Choose();
  ASSERT_TRUE(chosen.team);
  choice.Note(chosen, 4'000);
  EXPECT_LE(choice.team_ns(), 300 + 300 / 8);
}

}  // namespace
}  // namespace mmtune
