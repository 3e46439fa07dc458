#include "search/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <iostream>
#include <set>

#include "kernels/default_config.h"
#include "search/neighborhood.h"
#include "search/space.h"
#include "tests/synthetic_machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

Machine SyntheticMachine() { return testing::SyntheticZen3Machine(); }

Problem MatrixProblem(int threads) {
  return Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 512, 512, 512, threads};
}

// The search's seed: the analytical default with the packed blocks it had when the landscapes
// below were drawn around it (kc 256, mc 252 for 512^3 on this machine), so that a change of the
// cache model does not move the seed into, or away from, a landscape's basins. The strategies are
// under test here, not the model.
KernelConfig SeedFor(const Problem& problem, const Machine& machine) {
  KernelConfig seed = ModelConfig(problem, machine);
  if (seed.family == KernelFamily::kPacked) {
    seed.kc = 256;
    seed.mc = 252;
  }
  return seed;
}

SearchContext ContextFor(const Problem& problem, std::uint64_t seed = 1,
                         std::int64_t max_evals = 0,
                         const std::vector<KernelConfig>& warm_start = {}) {
  const Machine machine = SyntheticMachine();
  return BuildSearchSpace(SeedFor(problem, machine), warm_start, GenerateSpace(problem, machine),
                          seed, max_evals);
}

// The score of every index of a space; nullopt = the candidate fails.
using Landscape = std::vector<std::optional<double>>;

double Square(double x) { return x * x; }

// A hash of the config's index, for deterministic "noise" and failures.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Smooth and unimodal, with the optimum far from the analytical default in every group: packed
// kernels peak at a 4x24 tile with k unroll 4, kc 168, mc 64, nc 256, prefetching on and the ic
// loop; direct kernels are a lower plateau.
double SmoothScore(const KernelConfig& c) {
  double penalty = 6.0 * Square(std::log2(c.mr * c.nr) - std::log2(96.0)) +
                   3.0 * Square(std::log2(static_cast<double>(c.nr) / c.mr) - std::log2(6.0)) +
                   (c.k_unroll == 4 ? 0.0 : 2.0);
  if (c.family != KernelFamily::kPacked) return std::max(1.0, 50.0 - penalty);
  penalty += 8.0 * Square(std::log2(c.kc) - std::log2(168.0)) +
             5.0 * Square(std::log2(c.mc) - 6.0) + 2.0 * Square(std::log2(c.nc) - 8.0) +
             (c.prefetch_a > 0 ? 0.0 : 1.5) + (c.parallel_loop == ParallelLoop::kIc ? 0.0 : 1.0);
  return std::max(1.0, 100.0 - penalty);
}

Landscape Unimodal(const SearchContext& context) {
  Landscape scores;
  for (const KernelConfig& c : context.space) scores.push_back(SmoothScore(c));
  return scores;
}

// Squared log2 distance of a packed config's tile and blocks from a point.
double BasinDistance(const KernelConfig& c, double mr, double nr, double kc, double mc) {
  return Square(std::log2(c.mr / mr)) + Square(std::log2(c.nr / nr)) +
         Square(std::log2(c.kc / kc)) + Square(std::log2(c.mc / mc));
}

// Multimodal and deceptive: the smooth hill above, scaled to top out at 80, next to a broader
// basin of 90 (8x8 tiles, large kc, small mc) and a narrower one of 100 (2x16 tiles, small kc,
// large mc), which climbing from the default never reaches. Scores carry +-1% measurement
// noise, and one config in twelve fails, the analytical default included.
Landscape Multimodal(const SearchContext& context) {
  Landscape scores;
  for (std::size_t i = 0; i < context.space.size(); ++i) {
    const KernelConfig& c = context.space[i];
    const std::uint64_t hash = Mix(i);
    if (i == 0 || hash % 12 == 0) {
      scores.push_back(std::nullopt);
      continue;
    }
    double score = 0.8 * SmoothScore(c);
    if (c.family == KernelFamily::kPacked) {
      score = std::max(score, 90.0 * std::exp(-BasinDistance(c, 8, 8, 512, 64) / 3.0));
      score = std::max(score, 100.0 * std::exp(-BasinDistance(c, 2, 16, 128, 256) / 2.0));
    }
    const double noise = static_cast<double>(hash % 1000) / 1000.0 * 0.02 - 0.01;
    scores.push_back(score * (1.0 + noise));
  }
  return scores;
}

double BestOf(const Landscape& scores) {
  double best = 0.0;
  for (const auto& score : scores) best = std::max(best, score.value_or(0.0));
  return best;
}

std::unique_ptr<SearchStrategy> Make(const std::string& name, SearchContext context) {
  auto strategy = MakeStrategy(name, std::move(context));
  EXPECT_TRUE(strategy.ok()) << name;
  return std::move(strategy).value();
}

struct Trace {
  std::vector<std::size_t> proposals;
  std::vector<double> best_so_far;  // after each evaluation
};

// Drives a strategy like the tuner does: batches of four, each observed before the next Propose,
// until the strategy has nothing more or `max_evals` evaluations were made.
Trace Drive(SearchStrategy& strategy, const Landscape& scores,
            std::size_t max_evals = static_cast<std::size_t>(-1)) {
  Trace trace;
  double best = 0.0;
  while (trace.proposals.size() < max_evals) {
    const std::vector<std::size_t> batch =
        strategy.Propose(std::min<std::size_t>(4, max_evals - trace.proposals.size()));
    if (batch.empty()) break;
    for (std::size_t index : batch) {
      trace.proposals.push_back(index);
      if (index < scores.size()) best = std::max(best, scores[index].value_or(0.0));
      trace.best_so_far.push_back(best);
    }
    for (std::size_t index : batch) {
      strategy.Observe(index, index < scores.size() ? scores[index] : std::nullopt);
    }
  }
  return trace;
}

// Drives a strategy whose results arrive late and out of order: each batch is observed only
// after the next one was proposed, newest result first.
Trace DriveWithLateResults(SearchStrategy& strategy, const Landscape& scores) {
  Trace trace;
  std::deque<std::vector<std::size_t>> in_flight;
  while (true) {
    std::vector<std::size_t> batch = strategy.Propose(4);
    trace.proposals.insert(trace.proposals.end(), batch.begin(), batch.end());
    if (!batch.empty()) in_flight.push_back(std::move(batch));
    if (in_flight.empty()) break;  // nothing new and nothing pending: the search is over
    // Observe the oldest batch once two are in flight, or when the strategy waits for results.
    if (in_flight.size() >= 2 || batch.empty()) {
      std::vector<std::size_t> oldest = std::move(in_flight.front());
      in_flight.pop_front();
      std::reverse(oldest.begin(), oldest.end());
      for (std::size_t index : oldest) strategy.Observe(index, scores[index]);
    }
  }
  return trace;
}

// How many evaluations until the best found is within `fraction` of the landscape's best.
std::size_t EvaluationsToReach(const Trace& trace, double target) {
  for (std::size_t i = 0; i < trace.best_so_far.size(); ++i) {
    if (trace.best_so_far[i] >= target) return i + 1;
  }
  return static_cast<std::size_t>(-1);
}

void ExpectEachIndexAtMostOnce(const std::string& name, const std::vector<std::size_t>& proposals,
                               std::size_t size) {
  std::vector<int> seen(size, 0);
  for (std::size_t index : proposals) {
    ASSERT_LT(index, size) << name;
    ASSERT_EQ(++seen[index], 1) << name << " proposed " << index << " twice";
  }
}

const std::vector<std::string> kSearchingStrategies = {"exhaustive", "random", "local",
                                                       "evolutionary", "auto"};

TEST(StrategyTest, NamesAndUnknownName) {
  EXPECT_EQ(StrategyNames(), (std::vector<std::string>{"exhaustive", "random", "model", "local",
                                                       "evolutionary", "auto"}));
  for (const std::string& name : StrategyNames()) {
    auto strategy = MakeStrategy(name, ContextFor(MatrixProblem(1)));
    ASSERT_TRUE(strategy.ok()) << name;
    EXPECT_EQ((*strategy)->name(), name);
  }
  auto unknown = MakeStrategy("genetic", SearchContext{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  for (const std::string& name : StrategyNames()) {
    EXPECT_NE(unknown.error().message.find(name), std::string::npos) << unknown.error().message;
  }
  EXPECT_NE(unknown.error().message.find("genetic"), std::string::npos);
}

TEST(StrategyTest, BuildSearchSpacePutsSeedAndWarmStartsFirst) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = SyntheticMachine();
  const Problem problem = MatrixProblem(1);
  const std::vector<KernelConfig> space = GenerateSpace(problem, machine);
  ASSERT_GT(space.size(), 10u);
  const KernelConfig seed = ModelConfig(problem, machine);
  KernelConfig outside = space[3];
  outside.kc = 40;  // not in the generated space
  const std::vector<KernelConfig> warm = {space[5], seed, space[5], outside, space[2]};

  const SearchContext context = BuildSearchSpace(seed, warm, space, 7, 99);
  EXPECT_EQ(context.seed, 7u);
  EXPECT_EQ(context.max_evals, 99);
  ASSERT_EQ(context.warm_start_count, 3u);
  EXPECT_EQ(context.space[0], seed);
  EXPECT_EQ(context.space[1], space[5]);
  EXPECT_EQ(context.space[2], outside);
  EXPECT_EQ(context.space[3], space[2]);
  // The rest keeps its order, without the configs already placed.
  std::vector<KernelConfig> rest;
  for (const KernelConfig& c : space) {
    if (!(c == seed) && !(c == space[5]) && !(c == space[2])) rest.push_back(c);
  }
  ASSERT_EQ(context.space.size(), 4 + rest.size());
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), context.space.begin() + 4));
}

TEST(StrategyTest, NeighboursMoveAlongOneGroupAndStayClose) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const SearchContext context = ContextFor(MatrixProblem(2));
  const Neighborhood neighborhood(context.space);
  ASSERT_EQ(neighborhood.size(), context.space.size());
  for (std::size_t i = 0; i < context.space.size(); ++i) {
    const KernelConfig& c = context.space[i];
    const auto neighbors = neighborhood.Neighbors(i);
    ASSERT_FALSE(neighbors.empty()) << c.ToString();
    std::set<std::uint32_t> unique(neighbors.begin(), neighbors.end());
    EXPECT_EQ(unique.size(), neighbors.size());
    EXPECT_EQ(unique.count(static_cast<std::uint32_t>(i)), 0u);
    for (std::uint32_t j : neighbors) ASSERT_LT(j, context.space.size());
    if (c.family != KernelFamily::kPacked) continue;
    // "kc up" reaches the next larger kc of the same kernel and schedule, so that no kc value is
    // skipped even where its mc candidates differ.
    auto same_but_kc = [&](const KernelConfig& other) {
      return other.family == c.family && other.mr == c.mr && other.nr == c.nr &&
             other.k_unroll == c.k_unroll && other.prefetch_a == c.prefetch_a &&
             other.parallel_loop == c.parallel_loop && other.kc > c.kc;
    };
    int next_kc = 0;
    for (const KernelConfig& other : context.space) {
      if (same_but_kc(other) && (next_kc == 0 || other.kc < next_kc)) next_kc = other.kc;
    }
    int next_kc_neighbor = 0;
    for (std::uint32_t j : neighbors) {
      const KernelConfig& other = context.space[j];
      if (same_but_kc(other) && (next_kc_neighbor == 0 || other.kc < next_kc_neighbor)) {
        next_kc_neighbor = other.kc;
      }
    }
    EXPECT_EQ(next_kc_neighbor, next_kc) << c.ToString();
  }
  EXPECT_EQ(neighborhood.Distance(3, 3), 0);
  EXPECT_EQ(neighborhood.Distance(3, 4), neighborhood.Distance(4, 3));
}

// Direct configs that split K into blocks lie along the kc axis: the whole K one step past the
// longest block, so a climb can move from the whole K into blocks and between block sizes.
TEST(StrategyTest, DirectBlocksAreNeighboursAlongKc) {
  std::vector<KernelConfig> space = {KernelConfig{.family = KernelFamily::kPacked,
                                                  .isa = IsaLevel::kGeneric, .mr = 4, .nr = 8,
                                                  .kc = 256, .mc = 64, .nc = 512}};
  for (int kc : {0, 320, 640, 1280}) {
    space.push_back(KernelConfig{.family = KernelFamily::kDirect, .isa = IsaLevel::kGeneric,
                                 .mr = 4, .nr = 8, .kc = kc});
  }
  const Neighborhood neighborhood(space);
  auto neighbour_kcs = [&](std::size_t index) {
    std::set<int> kcs;
    for (std::uint32_t j : neighborhood.Neighbors(index)) {
      if (space[j].family == KernelFamily::kDirect) kcs.insert(space[j].kc);
    }
    return kcs;
  };
  EXPECT_TRUE(neighbour_kcs(1).contains(1280));  // the whole K -> the longest block
  EXPECT_TRUE(neighbour_kcs(3).contains(320));   // 640 -> 320 and 1280
  EXPECT_TRUE(neighbour_kcs(3).contains(1280));
  EXPECT_GT(neighborhood.Distance(1, 2), neighborhood.Distance(1, 4));
}

TEST(StrategyTest, ExhaustiveVisitsEveryIndexOnceInOrder) {
  const SearchContext context = ContextFor(MatrixProblem(1));
  auto strategy = Make("exhaustive", context);
  const Trace trace = Drive(*strategy, Unimodal(context));
  ASSERT_EQ(trace.proposals.size(), context.space.size());
  for (std::size_t i = 0; i < trace.proposals.size(); ++i) EXPECT_EQ(trace.proposals[i], i);
}

TEST(StrategyTest, ModelProposesOnlyTheDefault) {
  const SearchContext context = ContextFor(MatrixProblem(1));
  auto strategy = Make("model", context);
  const Trace trace = Drive(*strategy, Unimodal(context));
  EXPECT_EQ(trace.proposals, std::vector<std::size_t>{0});
}

TEST(StrategyTest, SearchingStrategiesCoverTheSpaceWithoutRepeats) {
  for (int threads : {1, 2}) {
    const SearchContext context = ContextFor(MatrixProblem(threads), 3);
    const Landscape scores = Multimodal(context);
    for (const std::string& name : kSearchingStrategies) {
      auto strategy = Make(name, context);
      const Trace trace = Drive(*strategy, scores);
      ExpectEachIndexAtMostOnce(name, trace.proposals, context.space.size());
      // Propose returns nothing only when the space is exhausted: a search never stalls.
      EXPECT_EQ(trace.proposals.size(), context.space.size()) << name;
      EXPECT_TRUE(strategy->Propose(4).empty()) << name;
    }
  }
}

TEST(StrategyTest, ResultsArrivingLateAndOutOfOrder) {
  const SearchContext context = ContextFor(MatrixProblem(1), 5);
  const Landscape scores = Multimodal(context);
  for (const std::string& name : kSearchingStrategies) {
    auto strategy = Make(name, context);
    const Trace trace = DriveWithLateResults(*strategy, scores);
    ExpectEachIndexAtMostOnce(name, trace.proposals, context.space.size());
    EXPECT_EQ(trace.proposals.size(), context.space.size()) << name;
  }
}

TEST(StrategyTest, SameSeedSameSearchOtherSeedOtherOrder) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (const std::string& name : StrategyNames()) {
    SearchContext context = ContextFor(MatrixProblem(2), 11);
    const Landscape scores = Multimodal(context);
    auto first = Make(name, context);
    auto second = Make(name, context);
    EXPECT_EQ(Drive(*first, scores, 600).proposals, Drive(*second, scores, 600).proposals) << name;
    if (name == "random" || name == "evolutionary") {
      auto reference = Make(name, context);
      context.seed = 12;
      auto other = Make(name, context);
      EXPECT_NE(Drive(*other, scores, 600).proposals, Drive(*reference, scores, 600).proposals)
          << name;
    }
  }
}

TEST(StrategyTest, RandomStartsWithTheDefault) {
  const SearchContext context = ContextFor(MatrixProblem(1), 9);
  auto strategy = Make("random", context);
  const Trace trace = Drive(*strategy, Unimodal(context), 10);
  ASSERT_FALSE(trace.proposals.empty());
  EXPECT_EQ(trace.proposals[0], 0u);
}

TEST(StrategyTest, LocalClimbsToTheOptimumOfASmoothFunction) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (int threads : {1, 2}) {
    const SearchContext context = ContextFor(MatrixProblem(threads));
    const Landscape scores = Unimodal(context);
    auto strategy = Make("local", context);
    const Trace trace = Drive(*strategy, scores);
    const std::size_t needed = EvaluationsToReach(trace, BestOf(scores));
    EXPECT_LE(needed, context.space.size() / 10)
        << "space " << context.space.size() << ", threads " << threads;
    std::cout << "[ local ] threads " << threads << ": optimum after " << needed << " of "
              << context.space.size() << " evaluations\n";
  }
}

// The product goal: within 3% of the exhaustive best with at most 10% of its evaluations.
TEST(StrategyTest, AutoGetsWithinThreePercentWithATenthOfTheEvaluations) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (int threads : {1, 2}) {
    for (std::uint64_t seed : {1, 2, 3}) {
      const SearchContext probe = ContextFor(MatrixProblem(threads));
      const std::size_t budget = probe.space.size() / 10;
      const SearchContext context =
          ContextFor(MatrixProblem(threads), seed, static_cast<std::int64_t>(budget));
      const Landscape scores = Unimodal(context);
      auto strategy = Make("auto", context);
      const Trace trace = Drive(*strategy, scores, budget);
      ASSERT_EQ(trace.proposals.size(), budget);
      const std::size_t needed = EvaluationsToReach(trace, 0.97 * BestOf(scores));
      EXPECT_LE(needed, budget) << "threads " << threads << " seed " << seed;
      std::cout << "[ auto smooth ] threads " << threads << " seed " << seed << ": within 3% after "
                << needed << " of " << context.space.size() << " evaluations\n";
    }
  }
}

// On a deceptive landscape no strategy is safe from bad luck, so this judges ten seeds together:
// auto must beat random search clearly on average and never be far off.
TEST(StrategyTest, AutoFindsTheBestBasinOfADeceptiveFunction) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (int threads : {1, 2}) {
    std::size_t auto_total = 0;
    std::size_t random_total = 0;
    std::size_t space_size = 0;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      const SearchContext context = ContextFor(MatrixProblem(threads), seed);
      space_size = context.space.size();
      const Landscape scores = Multimodal(context);
      const double target = 0.97 * BestOf(scores);
      auto strategy = Make("auto", context);
      const std::size_t needed = EvaluationsToReach(Drive(*strategy, scores), target);
      auto random = Make("random", context);
      const std::size_t random_needed = EvaluationsToReach(Drive(*random, scores), target);
      EXPECT_LE(needed, space_size / 2) << "threads " << threads << " seed " << seed;
      auto_total += needed;
      random_total += random_needed;
    }
    std::cout << "[ deceptive ] threads " << threads << ": within 3% after " << auto_total / 10
              << " evaluations on average (random " << random_total / 10 << ") of " << space_size
              << "\n";
    EXPECT_LE(auto_total / 10, space_size / 6) << "threads " << threads;
    EXPECT_LT(auto_total * 4, random_total * 3) << "threads " << threads;
  }
}

TEST(StrategyTest, FailedSeedsAreNeverClimbedFrom) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const SearchContext plain = ContextFor(MatrixProblem(1));
  // Two warm starts: the first fails, the second works (and is worse than what index 0 would
  // be). Index 0 fails too.
  const std::vector<KernelConfig> warm = {plain.space[40], plain.space[400]};
  const SearchContext context = ContextFor(MatrixProblem(1), 1, 0, warm);
  ASSERT_EQ(context.warm_start_count, 2u);
  Landscape scores = Unimodal(context);
  scores[0] = std::nullopt;
  scores[1] = std::nullopt;
  scores[2] = 10.0;
  const Neighborhood neighborhood(context.space);
  const auto around_working = neighborhood.Neighbors(2);
  for (const std::string name : {"local", "auto"}) {
    auto strategy = Make(name, context);
    const Trace trace = Drive(*strategy, scores, 3 + around_working.size());
    ASSERT_EQ(trace.proposals.size(), 3 + around_working.size()) << name;
    for (std::size_t i = 3; i < trace.proposals.size(); ++i) {
      EXPECT_NE(std::find(around_working.begin(), around_working.end(), trace.proposals[i]),
                around_working.end())
          << name << " climbs from a failed config";
    }
  }
}

TEST(StrategyTest, EverythingFailingStillSearches) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const SearchContext context = ContextFor(MatrixProblem(1));
  const Landscape scores(context.space.size(), std::nullopt);
  for (const std::string& name : kSearchingStrategies) {
    auto strategy = Make(name, context);
    const Trace trace = Drive(*strategy, scores, 200);
    EXPECT_EQ(trace.proposals.size(), 200u) << name;
    ExpectEachIndexAtMostOnce(name, trace.proposals, context.space.size());
  }
}

TEST(StrategyTest, SpaceOfOneConfig) {
  SearchContext context;
  context.space.push_back(ContextFor(MatrixProblem(1)).space[0]);
  for (const std::string& name : StrategyNames()) {
    auto strategy = Make(name, context);
    EXPECT_EQ(strategy->Propose(4), std::vector<std::size_t>{0}) << name;
    EXPECT_TRUE(strategy->Propose(4).empty()) << name;
    strategy->Observe(0, 1.0);
    EXPECT_TRUE(strategy->Propose(4).empty()) << name;
  }
}

TEST(StrategyTest, EmptySpaceAndStrayResults) {
  for (const std::string& name : StrategyNames()) {
    auto empty = Make(name, SearchContext{});
    EXPECT_TRUE(empty->Propose(4).empty()) << name;
    const SearchContext context = ContextFor(MatrixProblem(1));
    auto strategy = Make(name, context);
    // Results for indices never proposed, or out of range, are ignored.
    strategy->Observe(context.space.size() + 5, 1.0);
    strategy->Observe(7, 1e9);
    const Trace trace = Drive(*strategy, Unimodal(context), 40);
    ExpectEachIndexAtMostOnce(name, trace.proposals, context.space.size());
    EXPECT_FALSE(trace.proposals.empty()) << name;
  }
}

}  // namespace
}  // namespace mmtune
