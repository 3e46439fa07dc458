// The runtime's choice between a multi-threaded plan's team and the calling thread alone, fed
// with call times instead of timing real calls.
#include "runtime/team_or_alone.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>

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

// Calls from one exploration to the next once the choice has held, for calls of `ns`.
std::int64_t SteadyInterval(std::int64_t ns) {
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(
      std::max<std::int64_t>(TeamOrAlone::kMaxExplore, TeamOrAlone::kExploreSpacingNs / ns))));
}

TEST(TeamOrAloneTest, ASlowTeamGivesWayWithinAFewCallsAndComesBack) {
  const TeamOrAlone choice;
  MakeCalls(choice, 600, 300, 500);
  // Another library's threads take a core: the team takes 1000 ns from now on, and the smoothed
  // team time passes 500 within a handful of calls.
  MakeCalls(choice, 12, 1000, 500);
  EXPECT_LT(choice.alone_ns(), choice.team_ns());
  // The exploration interval grows while the team stays slow, and calls keep going alone: only
  // explorations (kMaxTeamWarmUps + 2 calls each, 32 calls apart at least) run on the team.
  const int later = MakeCalls(choice, 1000, 1000, 500);
  EXPECT_LE(later, static_cast<int>(TeamOrAlone::kMaxTeamWarmUps + 2) * (1000 / 32 + 1));
  EXPECT_GT(choice.explore_every(), TeamOrAlone::kMinExplore);
  // The core is free again: the next exploration of the team brings it back.
  MakeCalls(choice, static_cast<int>(2 * SteadyInterval(500)), 300, 500);
  EXPECT_LT(choice.team_ns(), choice.alone_ns());
  EXPECT_GE(MakeCalls(choice, 50, 300, 500), 50 - 3 * (50 / 8 + 1));
}

// Once the choice has held kMaxExplore calls, short calls explore kExploreSpacingNs of calls
// apart: each exploration alone costs the team a few slow calls after it.
TEST(TeamOrAloneTest, ShortCallsExploreAFewMillisecondsApart) {
  const TeamOrAlone choice;
  MakeCalls(choice, 4000, 300, 500);
  ASSERT_EQ(choice.explore_every(), TeamOrAlone::kMaxExplore);
  const int calls = static_cast<int>(3 * SteadyInterval(300));
  EXPECT_GE(MakeCalls(choice, calls, 300, 500), calls - 3 * 4);
  // Calls of a millisecond explore every kMaxExploreAlone calls once the team has held.
  const TeamOrAlone long_calls;
  MakeCalls(long_calls, 4000, 1'000'000, 2'000'000);
  ASSERT_EQ(long_calls.explore_every(), TeamOrAlone::kMaxExploreAlone);
  EXPECT_EQ(MakeCalls(long_calls, 4 * TeamOrAlone::kMaxExploreAlone, 1'000'000, 2'000'000),
            4 * static_cast<int>(TeamOrAlone::kMaxExploreAlone) - 4 * 3);
}

// An exploration alone costs the held team three calls at one thread's speed, and its interval
// grows to kMaxExploreAlone; a team explored from a streak alone is what brings a freed core
// back, and its interval stops at kMaxExplore.
TEST(TeamOrAloneTest, AHeldTeamExploresAloneLessOftenThanAHeldThreadExploresTheTeam) {
  const TeamOrAlone team_holds;
  MakeCalls(team_holds, 8000, 1'000'000, 2'000'000);
  EXPECT_EQ(team_holds.explore_every(), TeamOrAlone::kMaxExploreAlone);
  const TeamOrAlone alone_holds;
  MakeCalls(alone_holds, 8000, 2'000'000, 1'000'000);
  EXPECT_EQ(alone_holds.explore_every(), TeamOrAlone::kMaxExplore);
  static_assert(TeamOrAlone::kMaxExploreAlone > TeamOrAlone::kMaxExplore);
}

// A team explored from a streak alone first wakes its workers (calls alone that keep them
// warm, untimed), then runs kMaxTeamWarmUps untimed calls, then two timed; the faster is kept.
TEST(TeamOrAloneTest, AnExploredTeamWakesItsWorkersAndWarmsUpBeforeItIsTimed) {
  const TeamOrAlone choice;
  MakeCalls(choice, 600, 300, 500);
  MakeCalls(choice, 12, 1000, 500);
  ASSERT_LT(choice.alone_ns(), choice.team_ns());
  // Up to the exploration: alone; then the wake-up calls, the warm-ups and the timed calls.
  TeamOrAlone::Choice chosen = choice.Choose();
  for (int call = 0; call < 1000 && !chosen.keep_warm; ++call) {
    ASSERT_FALSE(chosen.team);
    choice.Note(chosen, 500);
    chosen = choice.Choose();
  }
  ASSERT_TRUE(chosen.keep_warm);
  const std::uint32_t wake_calls =
      std::min<std::uint32_t>(TeamOrAlone::kMaxWakeCalls, (TeamOrAlone::kWakeNs + 499) / 500);
  for (std::uint32_t call = 0; call < wake_calls; ++call) {
    if (call > 0) chosen = choice.Choose();
    EXPECT_FALSE(chosen.team);
    EXPECT_TRUE(chosen.keep_warm);
    EXPECT_FALSE(chosen.record);
    choice.Note(chosen, 500);
  }
  for (std::uint32_t call = 0; call < TeamOrAlone::kMaxTeamWarmUps; ++call) {
    chosen = choice.Choose();
    EXPECT_TRUE(chosen.team);
    EXPECT_FALSE(chosen.record);
    choice.Note(chosen, 1500);  // a cold team, three times slower than alone: still warming up
  }
  for (std::int64_t ns : {400, 350}) {
    chosen = choice.Choose();
    EXPECT_TRUE(chosen.team);
    EXPECT_TRUE(chosen.explore);
    EXPECT_TRUE(chosen.record);
    choice.Note(chosen, ns);
  }
  EXPECT_TRUE(chosen.last);
  EXPECT_EQ(choice.team_ns(), 350);
  EXPECT_EQ(choice.explore_every(), TeamOrAlone::kMinExplore);  // the team was faster
  // The team's calls right after run slow and are not timed (an exploration alone may come
  // between them); later ones are.
  for (std::uint32_t call = 0; call < TeamOrAlone::kSettleCalls; ++call) {
    chosen = choice.Choose();
    if (chosen.team) {
      EXPECT_FALSE(chosen.record) << call;
    }
    choice.Note(chosen, chosen.team ? 5'000 : 500);
  }
  EXPECT_EQ(choice.team_ns(), 350);
  bool timed_again = false;
  for (int call = 0; call < 4 * static_cast<int>(TeamOrAlone::kSettleCalls) && !timed_again;
       ++call) {
    chosen = choice.Choose();
    timed_again = chosen.team && chosen.record;
    choice.Note(chosen, chosen.team ? 350 : 500);
  }
  EXPECT_TRUE(timed_again);
}

// A warm-up far slower than alone (a member's core taken for a time slice) ends the team's
// exploration: its remaining calls run alone and the team counts as slower.
TEST(TeamOrAloneTest, ATeamFarSlowerWhileWarmingUpEndsItsExploration) {
  const TeamOrAlone choice;
  MakeCalls(choice, 600, 300, 500);
  MakeCalls(choice, 12, 1000, 500);
  ASSERT_LT(choice.alone_ns(), choice.team_ns());
  const std::uint32_t every = choice.explore_every();
  TeamOrAlone::Choice chosen = choice.Choose();
  for (int call = 0; call < 1000 && !chosen.team; ++call) {
    choice.Note(chosen, 500);
    chosen = choice.Choose();
  }
  ASSERT_TRUE(chosen.team);
  ASSERT_FALSE(chosen.record);
  choice.Note(chosen, TeamOrAlone::kAbandonFactor * 500 + TeamOrAlone::kWakeNs + 1);
  EXPECT_GT(choice.team_ns(), TeamOrAlone::kWakeNs);
  EXPECT_EQ(choice.explore_every(), 2 * every);
  for (std::uint32_t call = 0; call < TeamOrAlone::kMaxTeamWarmUps + 1; ++call) {
    chosen = choice.Choose();
    EXPECT_FALSE(chosen.team) << call;
    choice.Note(chosen, 500);
  }
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
  EXPECT_TRUE(warm_up.keep_warm);  // the team's workers spin meanwhile: it runs next
  choice.Note(warm_up, 5'000);  // cold caches, a sleeping worker: not kept
  for (std::int64_t ns : {500, 700}) {
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

// A problem whose first exploration comes after another found its team faster puts it off by
// kMaxExplore calls: a new M of variable-length inputs runs its first calls on the team, none
// alone. It explores at the next interval all the same (a team that turns slow must be able to
// give way), and after a verdict against the team, or without one, a problem explores early.
TEST(TeamOrAloneTest, AProblemPutsOffItsFirstExplorationWhileTheVerdictIsForTheTeam) {
  const TeamVerdict verdict;
  EXPECT_FALSE(verdict.TeamFaster());
  const TeamOrAlone first(&verdict);
  EXPECT_LT(MakeCalls(first, 30, 300, 600), 30);  // explored alone, and found the team faster
  EXPECT_TRUE(verdict.TeamFaster());

  const TeamOrAlone second(&verdict);
  EXPECT_EQ(second.explore_every(), TeamOrAlone::kMinExplore);
  EXPECT_EQ(MakeCalls(second, 200, 300, 600), 200);
  EXPECT_EQ(second.explore_every(), TeamOrAlone::kMaxExplore);
  const int later = static_cast<int>(SteadyInterval(300));
  EXPECT_LT(MakeCalls(second, later, 300, 600), later);
  EXPECT_EQ(second.alone_ns(), 600);

  // A slow team gives way within a few calls, and the verdict turns against the team.
  const TeamOrAlone third(&verdict);
  MakeCalls(third, 2 * later, 300, 600);
  ASSERT_EQ(third.alone_ns(), 600);
  MakeCalls(third, 12, 2'000, 600);
  EXPECT_LT(third.alone_ns(), third.team_ns());
  EXPECT_FALSE(verdict.TeamFaster());

  const TeamOrAlone fourth(&verdict);
  EXPECT_LT(MakeCalls(fourth, 30, 300, 600), 30);
  const TeamOrAlone unshared;
  EXPECT_LT(MakeCalls(unshared, 30, 300, 600), 30);
}

// What counts is the verdict when the first exploration comes, not when the problem was made:
// packed weights make their timings (one per band of M) when the model loads, before any GEMM
// ran, and the bands of one weights object then start at once.
TEST(TeamOrAloneTest, BandsMadeBeforeTheVerdictPutOffTheirFirstExplorations) {
  const TeamVerdict verdict;
  const TeamOrAloneByRows bands(&verdict);
  int on_team = 0;
  for (int call = 0; call < 40; ++call) {  // 128 rows, then 400, by turns
    on_team += MakeCalls(bands.For(call % 2 == 0 ? 128 : 400), 1, 300, 600);
  }
  EXPECT_LT(on_team, 40);  // the first band to explore did
  ASSERT_TRUE(verdict.TeamFaster());
  EXPECT_EQ(MakeCalls(bands.For(1000), 200, 700, 1400), 200);
  EXPECT_EQ(bands.For(128).team_ns(), 300);  // each band its own estimates
  EXPECT_EQ(bands.For(1000).team_ns(), 700);
}

// Four bands an octave: rows within one differ by less than a fifth, and every M has one.
TEST(TeamOrAloneTest, BandsOfRowsAreQuartersOfOctaves) {
  EXPECT_EQ(TeamOrAloneByRows::Band(0), TeamOrAloneByRows::Band(1));
  EXPECT_EQ(TeamOrAloneByRows::Band(128), TeamOrAloneByRows::Band(159));
  EXPECT_NE(TeamOrAloneByRows::Band(159), TeamOrAloneByRows::Band(160));
  EXPECT_EQ(TeamOrAloneByRows::Band(160), TeamOrAloneByRows::Band(191));
  EXPECT_EQ(TeamOrAloneByRows::Band(255) + 1, TeamOrAloneByRows::Band(256));
  // From 4 rows on (below, an octave has fewer rows than bands) each row moves one band at most.
  int previous = TeamOrAloneByRows::Band(4);
  for (std::int64_t rows = 5; rows < 100'000; ++rows) {
    const int band = TeamOrAloneByRows::Band(rows);
    ASSERT_GE(band, previous) << rows;
    ASSERT_LE(band, previous + 1) << rows;
    previous = band;
  }
  EXPECT_EQ(TeamOrAloneByRows::Band(std::int64_t{1} << 40), TeamOrAloneByRows::kBands - 1);
}

// A verdict needs both modes timed: a team timed before any call alone records nothing.
TEST(TeamOrAloneTest, AVerdictNeedsBothModesTimed) {
  const TeamVerdict verdict;
  const TeamOrAlone choice(&verdict);
  MakeCalls(choice, 5, 300, 600);  // before the first exploration
  EXPECT_EQ(choice.alone_ns(), 0);
  EXPECT_FALSE(verdict.TeamFaster());
}

}  // namespace
}  // namespace mmtune
