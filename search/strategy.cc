#include "search/strategy.h"

#include <algorithm>
#include <unordered_set>

#include "search/strategy_internal.h"

namespace mmtune {
namespace {

// Hashes a config field by field (it has padding, so its bytes are not a key).
struct ConfigHasher {
  std::size_t operator()(const KernelConfig& c) const {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::int64_t value) {
      h ^= static_cast<std::uint64_t>(value);
      h *= 1099511628211ull;
    };
    mix(static_cast<int>(c.family));
    mix(static_cast<int>(c.isa));
    mix(c.mr);
    mix(c.nr);
    mix(c.k_unroll);
    mix(c.kc);
    mix(c.mc);
    mix(c.nc);
    mix(c.prefetch_a);
    mix(c.prefetch_b);
    mix(c.prefetch_c ? 1 : 0);
    mix(static_cast<int>(c.parallel_loop));
    mix(static_cast<int>(c.tile_order));
    mix(c.a_in_place ? 1 : 0);
    mix(c.c_buffer ? 1 : 0);
    mix(c.threads);
    return static_cast<std::size_t>(h);
  }
};

struct StrategyEntry {
  const char* name;
  std::unique_ptr<SearchStrategy> (*make)(SearchContext);
};

constexpr StrategyEntry kStrategies[] = {
    {"exhaustive", MakeExhaustiveStrategy}, {"random", MakeRandomStrategy},
    {"model", MakeModelStrategy},           {"local", MakeLocalStrategy},
    {"evolutionary", MakeEvolutionaryStrategy}, {"auto", MakeAutoStrategy},
};

}  // namespace

SearchContext BuildSearchSpace(const KernelConfig& seed_config,
                               const std::vector<KernelConfig>& warm_start,
                               std::vector<KernelConfig> space, std::uint64_t seed,
                               std::int64_t max_evals) {
  SearchContext context;
  context.seed = seed;
  context.max_evals = max_evals;
  context.space.reserve(space.size() + warm_start.size() + 1);
  std::unordered_set<KernelConfig, ConfigHasher> seen;
  auto add = [&](const KernelConfig& config) {
    if (!seen.insert(config).second) return false;
    context.space.push_back(config);
    return true;
  };
  add(seed_config);
  for (const KernelConfig& config : warm_start) {
    if (add(config)) ++context.warm_start_count;
  }
  for (const KernelConfig& config : space) add(config);
  return context;
}

std::vector<std::string> StrategyNames() {
  std::vector<std::string> names;
  for (const StrategyEntry& entry : kStrategies) names.emplace_back(entry.name);
  return names;
}

Status CheckStrategyName(std::string_view name) {
  for (const StrategyEntry& entry : kStrategies) {
    if (name == entry.name) return OkStatus();
  }
  std::string valid;
  for (const StrategyEntry& entry : kStrategies) {
    if (!valid.empty()) valid += ", ";
    valid += entry.name;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown search strategy '" + std::string(name) + "' (valid: " + valid + ")");
}

Result<std::unique_ptr<SearchStrategy>> MakeStrategy(std::string_view name,
                                                     SearchContext context) {
  for (const StrategyEntry& entry : kStrategies) {
    if (name == entry.name) return entry.make(std::move(context));
  }
  return CheckStrategyName(name).error();
}

}  // namespace mmtune
