#include "mmtune/runtime.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "db/store.h"
#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "kernels/gemm_args.h"
#include "kernels/thread_pool.h"
#include "machine/cpu_binding.h"
#include "runtime/machine_match.h"
#include "runtime/record_file.h"
#include "kernels/epilogue.h"
#include "runtime/signed_int8.h"
#include "runtime/team_or_alone.h"
#include "runtime/winner_index.h"

namespace mmtune {

const char* ToString(LookupTier tier) {
  switch (tier) {
    case LookupTier::kExact: return "exact";
    case LookupTier::kBucket: return "bucket";
    case LookupTier::kNearest: return "nearest";
    case LookupTier::kDefault: return "default";
  }
  return "unknown";
}

namespace {

// How a call runs its problem: a plain call; a batch of fewer items than the runtime's threads,
// with a plain call's config (GemmPlan::RunBatch splits it by that config's threads); or a
// batch whose threads each run whole items alone, with their own config or, where their
// operands arrive from beyond L2 (BatchSpillsL2), SpilledItemsConfig. Each mode has its plans
// and team-or-alone timing apart.
// kWeightsCopy: a GEMM on packed weights held as a copy of B, which runs a winner tuned for
// weights (`tune --packed-b`) of its very shape where there is one, else what a plain call runs.
// kTunedBatch: a batch of a count that `tune --batch` tuned (Problem::batch), which runs that
// count's winner for its shape, or a nearest one, else the batch's analytical default.
enum class CallMode : std::uint8_t {
  kWhole,
  kItemsInTurn,
  kItemsAlone,
  kColdItemsAlone,
  kWeightsCopy,
  kTunedBatch
};

// A call's identity for the plan caches: everything of the problem but the thread count, which
// is the runtime's, and its mode.
struct CallKey {
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;
  std::int64_t batch;  // 1 but in kTunedBatch
  std::uint32_t kind;  // dtype, layout and transposes, a byte each
  CallMode mode;
  friend bool operator==(const CallKey&, const CallKey&) = default;
};

CallKey KeyOf(const Problem& p, CallMode mode = CallMode::kWhole) {
  return CallKey{p.m, p.n, p.k, p.batch,
                 static_cast<std::uint32_t>(p.dtype) | static_cast<std::uint32_t>(p.layout) << 8 |
                     static_cast<std::uint32_t>(p.trans_a) << 16 |
                     static_cast<std::uint32_t>(p.trans_b) << 24,
                 mode};
}

struct CallKeyHash {
  std::size_t operator()(const CallKey& key) const {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ key.kind ^
                      static_cast<std::uint64_t>(key.mode) << 32;
    for (std::uint64_t part : {static_cast<std::uint64_t>(key.m), static_cast<std::uint64_t>(key.n),
                               static_cast<std::uint64_t>(key.k),
                               static_cast<std::uint64_t>(key.batch)}) {
      h = (h ^ part) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    return static_cast<std::size_t>(h);
  }
};

// A config's plan, and the same on one thread for when another call has the pool.
template <typename X>
struct PlanAndSolo {
  GemmPlan<X> plan;
  GemmPlan<X> solo;

  static Result<PlanAndSolo> Create(const KernelConfig& config) {
    auto plan = GemmPlan<X>::Create(config);
    if (!plan) return plan.error();
    KernelConfig alone = config;
    alone.threads = 1;
    auto solo = GemmPlan<X>::Create(alone);
    if (!solo) return solo.error();
    return PlanAndSolo{std::move(*plan), std::move(*solo)};
  }
};

// The plans of one GEMM X (gemm_types.h); set for the dtype of the entry's problem.
template <class Kind>
using TypedPlans = std::optional<PlanAndSolo<Kind>>;

// What the runtime decided for one problem, made once and kept for the runtime's lifetime. Only
// the plans of the problem's dtype are set.
struct PlanEntry {
  Problem problem;  // the call's problem; threads = the runtime's most
  Lookup lookup;
  TypedPlans<float> f32;
  TypedPlans<double> f64;
  TypedPlans<Bf16Gemm> bf16;
  TypedPlans<S8Gemm> s8;
  // For a multi-threaded plan: whether the team pays right now.
  TeamOrAlone team_or_alone{&ProcessTeamVerdict()};
  // For the record file (only counted for calls without an exact winner); counting is not part
  // of the entry's logical state, and calls see entries as const.
  mutable std::atomic<std::uint64_t> calls{0};
  mutable std::atomic<std::uint64_t> nanoseconds{0};

  template <class Kind>
  const TypedPlans<Kind>& Plans() const {
    if constexpr (std::is_same_v<Kind, float>) {
      return f32;
    } else if constexpr (std::is_same_v<Kind, double>) {
      return f64;
    } else if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
      return bf16;
    } else {
      return s8;
    }
  }

  Status MakePlans(const KernelConfig& config) {
    switch (problem.dtype) {
      case DType::kF32: return MakeTypedPlans(config, f32);
      case DType::kF64: return MakeTypedPlans(config, f64);
      case DType::kBF16: return MakeTypedPlans(config, bf16);
      case DType::kS8: return MakeTypedPlans(config, s8);
    }
    return MakeError(ErrorCode::kInternal, "unknown dtype");
  }

 private:
  template <class Kind>
  static Status MakeTypedPlans(const KernelConfig& config, TypedPlans<Kind>& plans) {
    auto made = PlanAndSolo<Kind>::Create(config);
    if (!made) return made.error();
    plans.emplace(std::move(*made));
    return OkStatus();
  }
};

// The pool's members are shared by every runtime of the process; one multi-threaded GEMM runs on
// them at a time. A call that finds them busy runs on its own thread instead of waiting, which is
// what an application calling GEMM from several threads wants: no queue, no oversubscription.
std::mutex& PoolMutex() {
  static std::mutex mutex;
  return mutex;
}

// Runs `run(plan)` with the pool's members, or `run(solo)` on the calling thread alone: alone
// when another GEMM has the pool, or when `choice` (timing both on this problem) finds the team
// slower than one thread right now.
template <class Plan, class RunOn>
[[gnu::always_inline]] inline auto RunWithPoolOrAlone(const Plan& plan, const Plan& solo,
                                                      const TeamOrAlone& choice, RunOn&& run) {
  if (plan.config().threads > 1) {
    const TeamOrAlone::Choice chosen = choice.Choose();
    if (!chosen.team) {
      if (chosen.keep_warm) {
        // Under the pool's lock: KeepWarm, like a team's Run, is one caller's at a time.
        std::unique_lock lock(PoolMutex(), std::try_to_lock);
        if (lock.owns_lock()) DefaultThreadPool().KeepWarm();
      }
      return choice.Timed(chosen, [&] { return run(solo); });
    }
    std::unique_lock lock(PoolMutex(), std::try_to_lock);
    if (!lock.owns_lock()) return run(solo);
    return choice.Timed(chosen, [&] { return run(plan); });
  }
  return run(plan);
}

// Runs `run()` and adds the call and its time to `entry`'s record.
template <class RunFn>
auto CountedInto(const PlanEntry& entry, RunFn&& run) {
  const auto start = std::chrono::steady_clock::now();
  auto result = run();
  const auto spent = std::chrono::steady_clock::now() - start;
  entry.calls.fetch_add(1, std::memory_order_relaxed);
  entry.nanoseconds.fetch_add(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()),
      std::memory_order_relaxed);
  return result;
}

LookupReport ReportOf(const Lookup& found) {
  LookupReport report;
  report.tier = found.tier;
  report.tuned = found.tuned;
  report.gflops = found.gflops;
  report.threads = found.config.threads;
  report.threads_reason = found.threads_reason;
  report.bucket_range = found.bucket_range;
  nlohmann::json json = found.config;
  report.config_json = json.dump();
  report.config_text = found.config.ToString();
  return report;
}

// Whether GEMMs of the M that weights were packed for run the config found for them as it is: a
// winner tuned on their shape or its range. Others run PanelConfigs' choice for their M.
bool RunsAsTuned(LookupTier tier) {
  return tier == LookupTier::kExact || tier == LookupTier::kBucket;
}

// LookupReport::runs_text of weights `found` for their own M, where GEMMs of that M run `runs`.
std::string RunsText(const Lookup& found, const KernelConfig& runs) {
  return RunsAsTuned(found.tier) || runs == found.config ? std::string() : runs.ToString();
}

// The GEMM whose B elements are T (mmtune/runtime.h's PackedWeights).
template <typename T>
struct GemmOfB {
  using X = T;
};
template <>
struct GemmOfB<BFloat16> {
  using X = Bf16Gemm;
};
template <>
struct GemmOfB<std::int8_t> {
  using X = S8Gemm;
};

std::atomic<std::uint64_t> next_runtime_serial{1};

// A small per-thread, direct-mapped cache of plan entries, so that a steady-state call takes no
// lock at all. Slots are tagged with the runtime's serial number, never reused, so a slot left
// by a closed runtime can never match. Plain data without initializers on purpose: a zeroed
// thread_local needs no per-access initialization guard (serial 0 matches no runtime).
struct CacheSlot {
  std::uint64_t serial;
  CallKey key;
  const PlanEntry* entry;
};
constexpr std::size_t kCacheSlots = 128;
thread_local std::array<CacheSlot, kCacheSlots> tls_plan_cache;

int NumThreadsFromEnvironment() {
  const char* text = std::getenv("MMTUNE_NUM_THREADS");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1) {
    Log(LogLevel::kWarning, std::string("MMTUNE_NUM_THREADS='") + text +
                                "' is not a positive integer; ignored");
    return 0;
  }
  return static_cast<int>(std::min<long>(value, 1 << 16));
}

}  // namespace

int DefaultRuntimeThreads() {
  int threads = std::max(1, AllowedCoreCount());
  if (const int from_env = NumThreadsFromEnvironment(); from_env > 0) {
    threads = std::min(threads, from_env);
  }
  return threads;
}

struct Runtime::Impl {
  Machine machine;
  CacheBudget cache;  // of `machine`, for the batches' calls
  WinnerIndex index;
  std::vector<std::string> skipped;
  int max_threads = 1;
  std::string record_path;
  std::uint64_t serial = next_runtime_serial.fetch_add(1);
  ThreadPool* pool = &DefaultThreadPool();  // looked up once: its accessor has a static guard

  mutable std::shared_mutex entries_mutex;
  // Shared with the FixedGemms bound to an entry, which may outlive the runtime.
  mutable std::unordered_map<CallKey, std::shared_ptr<const PlanEntry>, CallKeyHash> entries;
  // While recording: GEMMs on packed weights' panels (which run the weights' plans, not an
  // entry's) that have no exact winner tuned for weights, as packed-b problems.
  mutable std::mutex panel_calls_mutex;
  mutable std::vector<RecordedProblem> panel_calls;

  // `run` (a GEMM on panels for packed-b `problem`), counted into panel_calls where no winner
  // of `tune --packed-b` is exact for it.
  template <class Run>
  Status CountedPanelCall(const Problem& problem, const Run& run) const {
    if (index.Find(problem).tier == LookupTier::kExact) return run();
    const auto start = std::chrono::steady_clock::now();
    Status status = run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard lock(panel_calls_mutex);
    for (RecordedProblem& recorded : panel_calls) {
      if (recorded.problem == problem) {
        ++recorded.calls;
        recorded.seconds += seconds;
        return status;
      }
    }
    panel_calls.push_back(RecordedProblem{problem, 1, seconds});
    return status;
  }

  Problem ProblemOf(DType dtype, Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                    std::int64_t n, std::int64_t k) const {
    return Problem{dtype, layout, trans_a, trans_b, m, n, k, max_threads};
  }

  // The hot path: this thread's cache, inline; nullptr on a miss.
  const PlanEntry* CachedEntry(const CallKey& key) const {
    const CacheSlot& slot = tls_plan_cache[CallKeyHash{}(key) % kCacheSlots];
    return slot.serial == serial && slot.key == key ? slot.entry : nullptr;
  }
  // The rest: the shared map, else a new entry; fills this thread's cache.
  Result<std::shared_ptr<const PlanEntry>> EntryFor(const Problem& problem) const;
  // The entry of a call of `mode`: `problem` for one item of a batch, its threads 1 where the
  // batch runs whole items per thread, else the runtime's.
  Result<std::shared_ptr<const PlanEntry>> EntryFor(const Problem& problem, CallMode mode) const;
  // Whether calls of `entry` are counted for the record file.
  bool Records(const PlanEntry& entry) const {
    return !record_path.empty() && entry.lookup.tier != LookupTier::kExact;
  }
  Result<std::unique_ptr<PlanEntry>> MakeEntry(const Problem& problem, CallMode mode) const;
  // The config calls of `problem` in `mode` run, before any plan is made.
  mmtune::Lookup LookupFor(const Problem& problem, CallMode mode) const;
  // What calls of `problem` in `mode` run where nothing tuned serves them.
  KernelConfig AnalyticalDefault(const Problem& problem, CallMode mode) const {
    return mode == CallMode::kColdItemsAlone ? SpilledItemsConfig(problem, machine)
                                             : UntunedConfig(problem, machine);
  }
  // How a batch of `count` GEMMs of `problem` (the runtime's threads) runs: the problem its
  // config is looked up for, and the mode.
  std::pair<Problem, CallMode> BatchCall(Problem problem, std::int64_t count) const;

  // Inlined into the public entry points, so that the call's arguments are not copied once
  // more on the way in. `Kind` is one of the GEMMs of gemm_types.h.
  template <class Kind>
  [[gnu::always_inline]] inline Status Gemm(const GemmArgs<Kind>& args,
                                            CallMode mode = CallMode::kWhole) const;

  // `run(plan)` on the plans of `problem`'s entry for `mode` (made on first use): with the
  // pool's team or alone (RunWithPoolOrAlone), counted for the record file where it records.
  template <class Kind, class RunPlan>
  [[gnu::always_inline]] inline Status RunOnEntry(const Problem& problem, CallMode mode,
                                                  const RunPlan& run) const;

  // A batch of `count` GEMMs of `shape`: `run(plan)` runs them with the plan of one item
  // (GemmPlan::RunBatch).
  template <class Kind, class RunBatch>
  Status Batch(const GemmArgs<Kind>& shape, std::int64_t count, const RunBatch& run) const;
  // Runtime::GemmBatch, strided and with pointer arrays.
  template <class Kind>
  Status StridedBatch(const GemmArgs<Kind>& args, const BatchStrides& batch) const {
    return Batch(args, batch.count, [&](const GemmPlan<Kind>& plan) {
      return plan.RunBatch(args, batch, *pool);
    });
  }
  template <class Kind>
  Status ListedBatch(const GemmArgs<Kind>& shape, std::int64_t count,
                     const typename GemmTypes<Kind>::A* const* a,
                     const typename GemmTypes<Kind>::B* const* b,
                     typename GemmTypes<Kind>::C* const* c) const {
    return Batch(shape, count, [&](const GemmPlan<Kind>& plan) {
      return plan.RunBatch(shape, count, a, b, c, *pool);
    });
  }

  // The config weights packed for `problem` (CallForm::kPackedB) run with. A winner measured on
  // this shape comes first: tuned with B packed beforehand (`tune --packed-b`), else the plain
  // call's (exact or bucket), whose timing included packing B; then the nearest winner, of
  // weights before plain calls; then the packed default. A plain gemv winner reads B as stored,
  // where the weights' panels serve one row better: it gives way to PackedWeightsConfig.
  mmtune::Lookup FindPackedWeights(const Problem& problem) const {
    const mmtune::Lookup weights = index.Find(problem);
    if (weights.tier == LookupTier::kExact) return weights;
    Problem plain = problem;
    plain.form = CallForm::kPlain;
    mmtune::Lookup tuned_plain = index.Find(plain);
    const bool plain_tuned = tuned_plain.tier != LookupTier::kDefault;
    if (tuned_plain.config.family == KernelFamily::kGemv && plain_tuned) {
      Problem sized = problem;
      sized.threads = tuned_plain.config.threads;
      KernelConfig panels = PackedWeightsConfig(sized, machine);
      if (panels.family == KernelFamily::kPacked) {
        tuned_plain = {LookupTier::kDefault, panels, Problem{}, 0.0, tuned_plain.threads_reason,
                       ""};
      }
    }
    if (tuned_plain.tier == LookupTier::kExact || tuned_plain.tier == LookupTier::kBucket) {
      return tuned_plain;
    }
    if (weights.tier != LookupTier::kDefault) return weights;
    return plain_tuned ? tuned_plain : weights;
  }

  // Runtime::PackB, which may throw std::bad_alloc.
  template <typename T>
  Result<PackedWeights<T>> PackWeights(Layout layout, Trans trans_b, std::int64_t m,
                                       std::int64_t n, std::int64_t k, const T* b,
                                       std::int64_t ldb) const;

  // A GEMM with packed weights of T (PackedWeights): their panels' plans, or this runtime's
  // Gemm on their copy of B. `args` holds all but B, its N and K, which come from `b`.
  template <typename T>
  Status GemmWith(GemmArgs<typename GemmOfB<T>::X> args,
                  const typename PackedWeights<T>::Impl& b) const;
  // The dequantized s8 GEMM (DequantizedInt8Gemm) with packed weights.
  Status DequantizedWith(Layout layout, Trans trans_a, std::int64_t m, const std::uint8_t* a,
                         bool a_signed, std::int64_t lda,
                         const PackedWeights<std::int8_t>::Impl& b, float* c, std::int64_t ldc,
                         const Dequantization& dequantization,
                         const Epilogue<float>& epilogue) const;
};

Result<std::unique_ptr<PlanEntry>> Runtime::Impl::MakeEntry(const Problem& problem,
                                                             CallMode mode) const {
  auto entry = std::make_unique<PlanEntry>();
  entry->problem = problem;
  // A batch running whole items per thread: one item's config, its team the batch's.
  const bool items_alone = mode == CallMode::kItemsAlone || mode == CallMode::kColdItemsAlone;
  auto make_plans = [&] {
    if (items_alone) entry->lookup.config.threads = max_threads;
    return entry->MakePlans(entry->lookup.config);
  };
  entry->lookup = LookupFor(problem, mode);
  Status status = make_plans();
  if (!status && entry->lookup.tier != LookupTier::kDefault) {
    // The index validated the config; a plan can still fail (e.g. a kernel this build lacks).
    Log(LogLevel::kWarning, "tuned config for " + problem.ToString() + " cannot run here (" +
                                status.error().message + "); using the analytical default");
    entry->lookup = mmtune::Lookup{LookupTier::kDefault, AnalyticalDefault(problem, mode),
                                   Problem{}, 0.0, "the analytical default (the tuned config "
                                   "cannot run here)", ""};
    status = make_plans();
  }
  if (!status) return status.error();
  return entry;
}

mmtune::Lookup Runtime::Impl::LookupFor(const Problem& problem, CallMode mode) const {
  mmtune::Lookup lookup = index.Find(problem);
  if (mode == CallMode::kWeightsCopy) {
    Problem weights = problem;
    weights.form = CallForm::kPackedB;
    if (mmtune::Lookup tuned = index.Find(weights); tuned.tier == LookupTier::kExact) {
      lookup = std::move(tuned);
    }
  }
  // The index's default is UntunedConfig's; a spilled batch's items run their own.
  if (mode == CallMode::kColdItemsAlone && lookup.tier == LookupTier::kDefault) {
    lookup.config = AnalyticalDefault(problem, mode);
  }
  if (mode == CallMode::kItemsAlone || mode == CallMode::kColdItemsAlone) {
    lookup.config.threads = max_threads;
    lookup.threads_reason = "a batch: whole items per thread, each with the config of one item "
                            "on one thread";
  }
  return lookup;
}

std::pair<Problem, CallMode> Runtime::Impl::BatchCall(Problem problem,
                                                      std::int64_t count) const {
  if (count > 1 && index.HasBatchesOf(count)) {
    problem.batch = count;
    return {problem, CallMode::kTunedBatch};
  }
  if (count < max_threads) return {problem, CallMode::kItemsInTurn};
  problem.threads = 1;
  return {problem,
          BatchSpillsL2(problem, count, cache) ? CallMode::kColdItemsAlone : CallMode::kItemsAlone};
}

Result<std::shared_ptr<const PlanEntry>> Runtime::Impl::EntryFor(const Problem& problem) const {
  return EntryFor(problem, CallMode::kWhole);
}

Result<std::shared_ptr<const PlanEntry>> Runtime::Impl::EntryFor(const Problem& problem,
                                                                 CallMode mode) const {
  const CallKey key = KeyOf(problem, mode);
  std::shared_ptr<const PlanEntry> found;
  {
    std::shared_lock lock(entries_mutex);
    const auto it = entries.find(key);
    if (it != entries.end()) found = it->second;
  }
  if (found == nullptr) {
    // Made outside the lock (validation and plan creation take microseconds); if another thread
    // made the same entry meanwhile, its entry wins and this one is dropped.
    auto made = MakeEntry(problem, mode);
    if (!made) return made.error();
    std::unique_lock lock(entries_mutex);
    found = entries.try_emplace(key, std::move(*made)).first->second;
  }
  tls_plan_cache[CallKeyHash{}(key) % kCacheSlots] = CacheSlot{serial, key, found.get()};
  return found;
}

template <class Kind>
Status Runtime::Impl::Gemm(const GemmArgs<Kind>& args, CallMode mode) const {
  // A malformed shape must fail before it creates a plan entry; the plan checks the leading
  // dimensions itself (one full check per call is enough, small GEMMs feel every nanosecond).
  if (args.m <= 0 || args.n <= 0 || args.k < 0) [[unlikely]] {
    // Negative dimensions are an error; M or N = 0 is a valid call that computes nothing.
    if (auto status = CheckEpilogue(args.epilogue); !status) return status;
    return CheckGemmArguments(args.layout, args.trans_a, args.trans_b, args.m, args.n, args.k,
                              args.lda, args.ldb, args.ldc);
  }
  const Problem problem = ProblemOf(GemmTypes<Kind>::kDType, args.layout, args.trans_a,
                                    args.trans_b, args.m, args.n, args.k);
  return RunOnEntry<Kind>(problem, mode,
                          [&](const GemmPlan<Kind>& plan) { return plan.Run(args, *pool); });
}

template <class Kind, class RunPlan>
Status Runtime::Impl::RunOnEntry(const Problem& problem, CallMode mode,
                                 const RunPlan& run) const {
  const PlanEntry* cached = CachedEntry(KeyOf(problem, mode));
  if (cached == nullptr) [[unlikely]] {
    auto made = EntryFor(problem, mode);
    if (!made) return made.error();
    cached = made->get();
  }
  const PlanEntry& e = *cached;
  const TypedPlans<Kind>& plans = e.Plans<Kind>();
  auto execute = [&] { return RunWithPoolOrAlone(plans->plan, plans->solo, e.team_or_alone, run); };
  if (!Records(e)) [[likely]] return execute();
  return CountedInto(e, execute);
}

template <class Kind, class RunBatch>
Status Runtime::Impl::Batch(const GemmArgs<Kind>& shape, std::int64_t count,
                            const RunBatch& run) const {
  if (shape.m <= 0 || shape.n <= 0 || shape.k < 0 || count <= 0) {
    // Nothing to look up: a malformed call fails as the kernels say, an empty one does nothing.
    if (auto status = CheckEpilogue(shape.epilogue); !status) return status;
    if (auto status = CheckGemmArguments(shape.layout, shape.trans_a, shape.trans_b, shape.m,
                                         shape.n, shape.k, shape.lda, shape.ldb, shape.ldc);
        !status) {
      return status;
    }
    if (count < 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "batch count must be >= 0, got " + std::to_string(count));
    }
    return OkStatus();
  }
  const auto [problem, mode] =
      BatchCall(ProblemOf(GemmTypes<Kind>::kDType, shape.layout, shape.trans_a, shape.trans_b,
                          shape.m, shape.n, shape.k),
                count);
  return RunOnEntry<Kind>(problem, mode, run);
}

Result<std::unique_ptr<Runtime>> Runtime::Open(const RuntimeOptions& options) {
  auto impl = std::make_unique<Impl>();
  auto machine = DetectHostMachine();
  if (!machine) return machine.error();
  impl->machine = std::move(*machine);

  const int budget = DefaultRuntimeThreads();
  impl->max_threads =
      std::max(1, options.max_threads > 0 ? std::min(options.max_threads, budget) : budget);

  impl->record_path = options.record_path;
  if (impl->record_path.empty() && options.record_from_environment) {
    if (const char* env = std::getenv("MMTUNE_RECORD"); env != nullptr) impl->record_path = env;
  }

  std::vector<WinnerRecord> winners;
  std::vector<ShapeRangeRecord> ranges;
  std::optional<TuningStore> store;
  if (!options.db_path.empty()) {
    auto opened = TuningStore::Open(options.db_path, DbOpenMode::kReadOnly);
    if (!opened) return opened.error();
    store.emplace(std::move(*opened));
    // What the tune measured of this machine (its effective LLC, its zmm FMA pipes) shapes the
    // defaults too; a row that cannot be read leaves hwloc's caches and the facts table in charge.
    auto row = store->FindMachine(impl->machine.fingerprint);
    if (!row) {
      Log(LogLevel::kWarning, options.db_path + ": this machine's measured facts are not used: " +
                                  row.error().message);
    } else if (*row) {
      TakeMeasuredFacts((*row)->peaks, &impl->machine);
    }
  }
  if (store && options.use_winners) {
    auto own = store->Winners(impl->machine.fingerprint);
    if (!own) return own.error();
    winners = std::move(*own);
    auto own_ranges = store->ShapeRanges(impl->machine.fingerprint);
    if (!own_ranges) return own_ranges.error();
    ranges = std::move(*own_ranges);
    if (options.allow_compatible) {
      auto machines = store->Machines();
      if (!machines) return machines.error();
      for (const MachineRecord& other : *machines) {
        if (other.fingerprint == impl->machine.fingerprint ||
            !IsCompatibleMachine(other.description, impl->machine)) {
          continue;
        }
        auto theirs = store->Winners(other.fingerprint);
        if (!theirs) return theirs.error();
        winners.insert(winners.end(), theirs->begin(), theirs->end());
        auto their_ranges = store->ShapeRanges(other.fingerprint);
        if (!their_ranges) return their_ranges.error();
        ranges.insert(ranges.end(), their_ranges->begin(), their_ranges->end());
      }
    }
  }
  impl->cache = CacheBudgetOf(impl->machine);
  impl->index = WinnerIndex::Build(winners, impl->machine, &impl->skipped, ranges);
  for (const std::string& line : impl->skipped) Log(LogLevel::kWarning, options.db_path + ": " + line);
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Runtime::~Runtime() {
  if (auto status = FlushRecord(); !status) {
    Log(LogLevel::kWarning, "cannot write the record file: " + status.error().message);
  }
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  return impl_->Gemm<float>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, {}});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, double alpha, const double* a, std::int64_t lda,
                     const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  return impl_->Gemm<double>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, {}});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, float alpha, const BFloat16* a, std::int64_t lda,
                     const BFloat16* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  return impl_->Gemm<Bf16Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, {}});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
                     const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
                     std::int64_t ldc) {
  return impl_->Gemm<S8Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, {}});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
                     std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                     const Epilogue<float>& epilogue) {
  return impl_->Gemm<float>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, double alpha, const double* a, std::int64_t lda,
                     const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc,
                     const Epilogue<double>& epilogue) {
  return impl_->Gemm<double>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, float alpha, const BFloat16* a, std::int64_t lda,
                     const BFloat16* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                     const Epilogue<float>& epilogue) {
  return impl_->Gemm<Bf16Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
                     const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
                     std::int64_t ldc, const Epilogue<std::int32_t>& epilogue) {
  return impl_->Gemm<S8Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::int32_t alpha, const std::int8_t* a, std::int64_t lda,
                     const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
                     std::int64_t ldc) {
  return SignedInt8Gemm(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, ldc,
                        [&](std::int64_t shifted_lda, const std::uint8_t* shifted,
                            const Epilogue<std::int32_t>& compensation) {
                          return impl_->Gemm<S8Gemm>({layout, trans_a, trans_b, m, n, k, alpha,
                                                      shifted, shifted_lda, b, ldb, beta, c, ldc,
                                                      compensation});
                        });
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const std::uint8_t* a, std::int64_t lda,
                     const std::int8_t* b, std::int64_t ldb, float* c, std::int64_t ldc,
                     const Dequantization& dequantization, const Epilogue<float>& epilogue) {
  return DequantizedInt8Gemm(layout, trans_a, trans_b, m, n, k, a, false, lda, b, ldb, c, ldc,
                             dequantization, epilogue, [&](const GemmArgs<S8Gemm>& args) {
                               return impl_->Gemm<S8Gemm>(args);
                             });
}

Status Runtime::Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const std::int8_t* a, std::int64_t lda,
                     const std::int8_t* b, std::int64_t ldb, float* c, std::int64_t ldc,
                     const Dequantization& dequantization, const Epilogue<float>& epilogue) {
  return DequantizedInt8Gemm(layout, trans_a, trans_b, m, n, k,
                             reinterpret_cast<const std::uint8_t*>(a), true, lda, b, ldb, c, ldc,
                             dequantization, epilogue, [&](const GemmArgs<S8Gemm>& args) {
                               return impl_->Gemm<S8Gemm>(args);
                             });
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const float* a,
                          std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                          float* c, std::int64_t ldc, const BatchStrides& batch,
                          const Epilogue<float>& epilogue) {
  return impl_->StridedBatch<float>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue}, batch);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, double alpha, const double* a,
                          std::int64_t lda, const double* b, std::int64_t ldb, double beta,
                          double* c, std::int64_t ldc, const BatchStrides& batch,
                          const Epilogue<double>& epilogue) {
  return impl_->StridedBatch<double>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue}, batch);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const BFloat16* a,
                          std::int64_t lda, const BFloat16* b, std::int64_t ldb, float beta,
                          float* c, std::int64_t ldc, const BatchStrides& batch,
                          const Epilogue<float>& epilogue) {
  return impl_->StridedBatch<Bf16Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue}, batch);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, std::int32_t alpha,
                          const std::uint8_t* a, std::int64_t lda, const std::int8_t* b,
                          std::int64_t ldb, std::int32_t beta, std::int32_t* c, std::int64_t ldc,
                          const BatchStrides& batch, const Epilogue<std::int32_t>& epilogue) {
  return impl_->StridedBatch<S8Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue}, batch);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const float* const* a,
                          std::int64_t lda, const float* const* b, std::int64_t ldb, float beta,
                          float* const* c, std::int64_t ldc, std::int64_t count,
                          const Epilogue<float>& epilogue) {
  return impl_->ListedBatch<float>(
      {layout, trans_a, trans_b, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc,
       epilogue},
      count, a, b, c);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, double alpha, const double* const* a,
                          std::int64_t lda, const double* const* b, std::int64_t ldb,
                          double beta, double* const* c, std::int64_t ldc, std::int64_t count,
                          const Epilogue<double>& epilogue) {
  return impl_->ListedBatch<double>(
      {layout, trans_a, trans_b, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc,
       epilogue},
      count, a, b, c);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const BFloat16* const* a,
                          std::int64_t lda, const BFloat16* const* b, std::int64_t ldb,
                          float beta, float* const* c, std::int64_t ldc, std::int64_t count,
                          const Epilogue<float>& epilogue) {
  return impl_->ListedBatch<Bf16Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc,
       epilogue},
      count, a, b, c);
}

Status Runtime::GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, std::int32_t alpha,
                          const std::uint8_t* const* a, std::int64_t lda,
                          const std::int8_t* const* b, std::int64_t ldb, std::int32_t beta,
                          std::int32_t* const* c, std::int64_t ldc, std::int64_t count,
                          const Epilogue<std::int32_t>& epilogue) {
  return impl_->ListedBatch<S8Gemm>(
      {layout, trans_a, trans_b, m, n, k, alpha, nullptr, lda, nullptr, ldb, beta, nullptr, ldc,
       epilogue},
      count, a, b, c);
}

LookupReport Runtime::Lookup(const Problem& problem) const {
  Problem asked = problem;
  asked.threads = impl_->max_threads;
  if (asked.form == CallForm::kPackedB) {
    const mmtune::Lookup found = impl_->FindPackedWeights(asked);
    LookupReport report = ReportOf(found);
    report.runs_text = RunsText(found, PanelCallConfig(found.config, asked, impl_->machine));
    return report;
  }
  if (asked.batch > 1) {
    // What GemmBatch runs with a batch of this count.
    const std::int64_t count = asked.batch;
    asked.batch = 1;
    const auto [looked_up, mode] = impl_->BatchCall(asked, count);
    return ReportOf(impl_->LookupFor(looked_up, mode));
  }
  return ReportOf(impl_->index.Find(asked));
}

int Runtime::max_threads() const { return impl_->max_threads; }

std::size_t Runtime::winners_loaded() const { return impl_->index.size(); }

const std::vector<std::string>& Runtime::skipped_winners() const { return impl_->skipped; }

Status Runtime::FlushRecord() {
  if (impl_->record_path.empty()) return OkStatus();
  std::vector<RecordedProblem> recorded;
  {
    std::shared_lock lock(impl_->entries_mutex);
    for (const auto& [key, entry] : impl_->entries) {
      const std::uint64_t calls = entry->calls.exchange(0, std::memory_order_relaxed);
      const std::uint64_t nanos = entry->nanoseconds.exchange(0, std::memory_order_relaxed);
      if (calls == 0) continue;
      Problem problem = entry->problem;
      // A GEMM on weights held as a copy is tuned as weights, as one on panels is.
      if (key.mode == CallMode::kWeightsCopy) problem.form = CallForm::kPackedB;
      recorded.push_back(RecordedProblem{problem, calls, static_cast<double>(nanos) * 1e-9});
    }
  }
  {
    std::lock_guard lock(impl_->panel_calls_mutex);
    recorded.insert(recorded.end(), impl_->panel_calls.begin(), impl_->panel_calls.end());
    impl_->panel_calls.clear();
  }
  if (recorded.empty()) return OkStatus();
  return MergeIntoRecordFile(impl_->record_path, recorded);
}

// ---- Fixed problems ----

template <typename T>
struct FixedGemm<T>::Impl {
  // Both unset when M or N is 0: a call computes nothing.
  std::optional<BoundGemm<T>> plan;  // the looked-up config
  std::optional<BoundGemm<T>> solo;  // the same on one thread, for when another call has the pool
  TeamOrAlone team_or_alone{&ProcessTeamVerdict()};
  ThreadPool* pool = nullptr;
  LookupReport lookup;
  // Set only when the runtime records this problem's calls. Shared, so that a FixedGemm kept
  // after its runtime closed counts into an entry nobody reads any more, never a freed one.
  std::shared_ptr<const PlanEntry> recorded;

  Status Execute(const T* a, const T* b, T* c) const {
    if (!plan) return OkStatus();
    return RunWithPoolOrAlone(*plan, *solo, team_or_alone, [&](const BoundGemm<T>& bound) {
      return bound.Run(a, b, c, *pool);
    });
  }
};

template <typename T>
FixedGemm<T>::FixedGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
template <typename T>
FixedGemm<T>::FixedGemm(FixedGemm&&) noexcept = default;
template <typename T>
FixedGemm<T>& FixedGemm<T>::operator=(FixedGemm&&) noexcept = default;
template <typename T>
FixedGemm<T>::~FixedGemm() = default;

template <typename T>
Status FixedGemm<T>::Run(const T* a, const T* b, T* c) const {
  const Impl& impl = *impl_;
  if (impl.recorded == nullptr) [[likely]] return impl.Execute(a, b, c);
  return CountedInto(*impl.recorded, [&] { return impl.Execute(a, b, c); });
}

template <typename T>
const LookupReport& FixedGemm<T>::lookup() const {
  return impl_->lookup;
}

template <typename T>
  requires std::is_same_v<T, float> || std::is_same_v<T, double>
Result<FixedGemm<T>> Runtime::Bind(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                                   std::int64_t n, std::int64_t k, T alpha, std::int64_t lda,
                                   std::int64_t ldb, std::type_identity_t<T> beta,
                                   std::int64_t ldc) const {
  return Bind<T>(layout, trans_a, trans_b, m, n, k, alpha, lda, ldb, beta, ldc, Epilogue<T>{});
}

template <typename T>
  requires std::is_same_v<T, float> || std::is_same_v<T, double>
Result<FixedGemm<T>> Runtime::Bind(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                                   std::int64_t n, std::int64_t k, T alpha, std::int64_t lda,
                                   std::int64_t ldb, std::type_identity_t<T> beta,
                                   std::int64_t ldc,
                                   const Epilogue<std::type_identity_t<T>>& epilogue) const {
  auto fixed = std::make_unique<typename FixedGemm<T>::Impl>();
  fixed->pool = impl_->pool;
  if (m <= 0 || n <= 0 || k < 0) {
    // As in Gemm: negative dimensions are an error, M or N = 0 computes nothing.
    if (Status status = CheckEpilogue(epilogue); !status) return status.error();
    if (Status status = CheckGemmArguments(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
        !status) {
      return status.error();
    }
    fixed->lookup.config_json = "{}";
    return FixedGemm<T>(std::move(fixed));
  }
  const Problem problem = impl_->ProblemOf(GemmTypes<T>::kDType, layout, trans_a, trans_b, m, n, k);
  auto entry = impl_->EntryFor(problem);
  if (!entry) return entry.error();
  const TypedPlans<T>& plans = (*entry)->template Plans<T>();
  const GemmArgs<T> shape{layout,  trans_a, trans_b, m,   n,    k,       alpha,
                          nullptr, lda,     nullptr, ldb, beta, nullptr, ldc, epilogue};
  auto plan = plans->plan.Bind(shape);
  if (!plan) return plan.error();
  auto solo = plans->solo.Bind(shape);
  if (!solo) return solo.error();
  fixed->plan.emplace(std::move(*plan));
  fixed->solo.emplace(std::move(*solo));
  fixed->lookup = ReportOf((*entry)->lookup);
  if (impl_->Records(**entry)) fixed->recorded = std::move(*entry);
  return FixedGemm<T>(std::move(fixed));
}

// ---- Packed weights ----

// Packed weights hold either panels, for the packed family, or, where the config chosen for them
// reads B unpacked (direct, gemv), a copy of B as it was given with tight leading dimension,
// which each GEMM then runs through the runtime's own lookup for its M.
template <typename T>
struct PackedWeights<T>::Impl {
  using X = typename GemmOfB<T>::X;
  Layout layout = Layout::kRowMajor;
  Trans trans_b = Trans::kNo;
  std::int64_t k = 0;
  std::int64_t n = 0;
  LookupReport lookup;
  // Panels:
  std::optional<PackedB<X>> packed;
  // The configs that read them, [0] the one they were packed for, and a plan of each.
  std::optional<PanelConfigs<X>> configs;
  std::vector<PlanAndSolo<X>> plans;
  // The rows of GEMMs that run configs[0] whatever PanelConfigs::For says: the M it was found
  // for, where it RunsAsTuned; else 0.
  std::int64_t tuned_rows = 0;
  TeamOrAloneByRows team_or_alone{&ProcessTeamVerdict()};
  ThreadPool* pool = nullptr;
  // int8 weights: the column sums of op(B) modulo 2^32, for A's zero point (DequantizedWith).
  std::vector<std::uint32_t> column_sums;
  // Copy, on a page as the operands the tuner times and applications' tensors lie: direct
  // kernels read B rows that start 16 bytes past a line (new[]'s placement) clearly slower
  // (docs/runtime.md, Packed weights).
  static constexpr std::size_t kCopyAlignment = 4096;
  struct FreeCopy {
    void operator()(T* p) const { ::operator delete(p, std::align_val_t{kCopyAlignment}); }
  };
  std::unique_ptr<T, FreeCopy> copy;
  std::int64_t copy_elements = 0;
  std::int64_t ldb = 1;

  std::size_t bytes() const {
    return static_cast<std::size_t>(packed ? packed->size() : copy_elements) * sizeof(T);
  }

  // The panels' GEMM (not for a copy).
  Status Execute(const GemmArgs<X>& args) const {
    const PlanAndSolo<X>& chosen = plans[args.m == tuned_rows ? 0 : configs->For(args.m)];
    return RunWithPoolOrAlone(chosen.plan, chosen.solo, team_or_alone.For(args.m),
                              [&](const GemmPlan<X>& with) {
                                return with.Run(args, *packed, *pool);
                              });
  }
};

template <typename T>
PackedWeights<T>::PackedWeights(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
template <typename T>
PackedWeights<T>::PackedWeights(PackedWeights&&) noexcept = default;
template <typename T>
PackedWeights<T>& PackedWeights<T>::operator=(PackedWeights&&) noexcept = default;
template <typename T>
PackedWeights<T>::~PackedWeights() = default;
template <typename T>
Layout PackedWeights<T>::layout() const {
  return impl_->layout;
}
template <typename T>
std::int64_t PackedWeights<T>::k() const {
  return impl_->k;
}
template <typename T>
std::int64_t PackedWeights<T>::n() const {
  return impl_->n;
}
template <typename T>
std::size_t PackedWeights<T>::bytes() const {
  return impl_->bytes();
}
template <typename T>
bool PackedWeights<T>::holds_panels() const {
  return impl_->packed.has_value();
}
template <typename T>
const LookupReport& PackedWeights<T>::lookup() const {
  return impl_->lookup;
}

template <typename T>
Result<PackedWeights<T>> Runtime::Impl::PackWeights(Layout layout, Trans trans_b,
                                                    std::int64_t m, std::int64_t n,
                                                    std::int64_t k, const T* b,
                                                    std::int64_t ldb) const {
  using X = typename GemmOfB<T>::X;
  if (m < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "m = " + std::to_string(m) +
                         ": the rows the weights are packed for must be >= 1");
  }
  // Empty weights still need a config that runs (BLAS semantics of K = 0); it is chosen as for
  // one column or one k.
  Problem problem = ProblemOf(GemmTypes<X>::kDType, layout, Trans::kNo, trans_b, m,
                              std::max<std::int64_t>(n, 1), std::max<std::int64_t>(k, 1));
  problem.form = CallForm::kPackedB;
  const mmtune::Lookup found = FindPackedWeights(problem);
  auto impl = std::make_unique<typename PackedWeights<T>::Impl>();
  impl->layout = layout;
  impl->trans_b = trans_b;
  impl->k = k;
  impl->n = n;
  impl->lookup = ReportOf(found);
  // Called once B's arguments are known good.
  auto keep_column_sums = [&] {
    if constexpr (std::is_same_v<T, std::int8_t>) {
      impl->column_sums.resize(static_cast<std::size_t>(n));
      ColumnSumsOf(layout, trans_b, n, k, b, ldb, impl->column_sums.data());
    }
  };
  if (found.config.family != KernelFamily::kPacked) {
    if (Status status = CheckBArguments(layout, trans_b, k, n, b, ldb); !status) {
      return status.error();
    }
    // B as stored, rows (row-major) or columns (column-major) at the tight leading dimension.
    const bool transposed = trans_b == Trans::kYes;
    const std::int64_t stored_rows = transposed ? n : k;
    const std::int64_t stored_cols = transposed ? k : n;
    const bool row_major = layout == Layout::kRowMajor;
    const std::int64_t lines = row_major ? stored_rows : stored_cols;
    const std::int64_t line = row_major ? stored_cols : stored_rows;
    impl->ldb = MinLeadingDimension(layout, trans_b, k, n);
    if (__builtin_mul_overflow(lines, line, &impl->copy_elements) ||
        impl->copy_elements > std::numeric_limits<std::int64_t>::max() /
                                  static_cast<std::int64_t>(sizeof(T))) {
      return MakeError(ErrorCode::kInvalidArgument, "B of " + std::to_string(k) + " x " +
                                                        std::to_string(n) +
                                                        " is too large to copy");
    }
    if (impl->copy_elements > 0) {
      impl->copy.reset(static_cast<T*>(
          ::operator new(static_cast<std::size_t>(impl->copy_elements) * sizeof(T),
                         std::align_val_t{PackedWeights<T>::Impl::kCopyAlignment}, std::nothrow)));
      if (impl->copy == nullptr) {
        return MakeError(ErrorCode::kIo, "not enough memory to copy B of " + std::to_string(k) +
                                             " x " + std::to_string(n));
      }
      for (std::int64_t i = 0; i < lines; ++i) {
        std::copy(b + i * ldb, b + i * ldb + line, impl->copy.get() + i * impl->ldb);
      }
    }
    keep_column_sums();
    return PackedWeights<T>(std::move(impl));
  }
  auto packer = GemmPlan<X>::Create(found.config);
  if (!packer) return packer.error();
  auto packed = packer->PackB(layout, trans_b, n, k, b, ldb);
  if (!packed) return packed.error();
  // Calls of other rows may run another tile or split on the same panels.
  impl->configs.emplace(*packed, machine);
  for (const KernelConfig& config : impl->configs->configs()) {
    auto plans = PlanAndSolo<X>::Create(config);
    if (!plans) return plans.error();
    impl->plans.push_back(std::move(*plans));
  }
  if (RunsAsTuned(found.tier)) impl->tuned_rows = m;
  impl->lookup.runs_text = RunsText(found, impl->configs->configs()[impl->configs->For(m)]);
  impl->packed.emplace(std::move(*packed));
  impl->pool = pool;
  keep_column_sums();
  return PackedWeights<T>(std::move(impl));
}

template <typename T>
  requires std::is_same_v<T, float> || std::is_same_v<T, double> ||
           std::is_same_v<T, BFloat16> || std::is_same_v<T, std::int8_t>
Result<PackedWeights<T>> Runtime::PackB(Layout layout, Trans trans_b, std::int64_t m,
                                        std::int64_t n, std::int64_t k, const T* b,
                                        std::int64_t ldb) const {
  // The panels and the copy are allocated without exceptions; what holds them may still throw,
  // which must not leave the library.
  try {
    return impl_->PackWeights<T>(layout, trans_b, m, n, k, b, ldb);
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kIo, "not enough memory to pack B of " + std::to_string(k) +
                                         " x " + std::to_string(n));
  }
}

template <typename T>
Status Runtime::Impl::GemmWith(GemmArgs<typename GemmOfB<T>::X> args,
                               const typename PackedWeights<T>::Impl& b) const {
  using X = typename GemmOfB<T>::X;
  args.n = b.n;
  args.k = b.k;
  if (b.packed) {
    args.trans_b = Trans::kNo;
    args.b = nullptr;
    args.ldb = 0;
    if (!record_path.empty() && args.m > 0) [[unlikely]] {
      Problem problem = ProblemOf(GemmTypes<X>::kDType, args.layout, args.trans_a, b.trans_b,
                                  args.m, b.n, b.k);
      problem.form = CallForm::kPackedB;
      return CountedPanelCall(problem, [&] { return b.Execute(args); });
    }
    return b.Execute(args);
  }
  if (args.layout != b.layout) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("B was packed for a ") + ToString(b.layout) +
                         "-major GEMM, not a " + ToString(args.layout) + "-major one");
  }
  args.trans_b = b.trans_b;
  args.b = b.copy.get();
  args.ldb = b.ldb;
  return Gemm<X>(args, CallMode::kWeightsCopy);
}

Status Runtime::Impl::DequantizedWith(Layout layout, Trans trans_a, std::int64_t m,
                                      const std::uint8_t* a, bool a_signed, std::int64_t lda,
                                      const PackedWeights<std::int8_t>::Impl& b, float* c,
                                      std::int64_t ldc, const Dequantization& dequantization,
                                      const Epilogue<float>& epilogue) const {
  // B stands in as the tight op(B) it was packed from: only its shape is checked, never read.
  const std::int64_t ldb = MinLeadingDimension(layout, Trans::kNo, b.k, b.n);
  return DequantizedInt8Gemm(
      layout, trans_a, Trans::kNo, m, b.n, b.k, a, a_signed, lda, nullptr, ldb, c, ldc,
      dequantization, epilogue,
      [&](const GemmArgs<S8Gemm>& args) { return GemmWith<std::int8_t>(args, b); },
      b.column_sums.data());
}

// The packed Gemm overloads: the arguments but B's, which GemmWith takes from the weights.
template <class X>
GemmArgs<X> PackedArgs(Layout layout, Trans trans_a, std::int64_t m,
                       typename GemmTypes<X>::Scalar alpha, const typename GemmTypes<X>::A* a,
                       std::int64_t lda, typename GemmTypes<X>::Scalar beta,
                       typename GemmTypes<X>::C* c, std::int64_t ldc,
                       const Epilogue<typename GemmTypes<X>::C>& epilogue) {
  return {layout, trans_a, Trans::kNo, m, 0, 0, alpha, a, lda, nullptr, 0, beta, c, ldc,
          epilogue};
}

Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha, const float* a,
                     std::int64_t lda, const PackedWeights<float>& b, float beta, float* c,
                     std::int64_t ldc) {
  return Gemm(layout, trans_a, m, alpha, a, lda, b, beta, c, ldc, Epilogue<float>{});
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, double alpha, const double* a,
                     std::int64_t lda, const PackedWeights<double>& b, double beta, double* c,
                     std::int64_t ldc) {
  return Gemm(layout, trans_a, m, alpha, a, lda, b, beta, c, ldc, Epilogue<double>{});
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha,
                     const BFloat16* a, std::int64_t lda, const PackedWeights<BFloat16>& b,
                     float beta, float* c, std::int64_t ldc) {
  return Gemm(layout, trans_a, m, alpha, a, lda, b, beta, c, ldc, Epilogue<float>{});
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, std::int32_t alpha,
                     const std::uint8_t* a, std::int64_t lda, const PackedWeights<std::int8_t>& b,
                     std::int32_t beta, std::int32_t* c, std::int64_t ldc) {
  return Gemm(layout, trans_a, m, alpha, a, lda, b, beta, c, ldc, Epilogue<std::int32_t>{});
}

Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha, const float* a,
                     std::int64_t lda, const PackedWeights<float>& b, float beta, float* c,
                     std::int64_t ldc, const Epilogue<float>& epilogue) {
  return impl_->GemmWith<float>(
      PackedArgs<float>(layout, trans_a, m, alpha, a, lda, beta, c, ldc, epilogue), *b.impl_);
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, double alpha, const double* a,
                     std::int64_t lda, const PackedWeights<double>& b, double beta, double* c,
                     std::int64_t ldc, const Epilogue<double>& epilogue) {
  return impl_->GemmWith<double>(
      PackedArgs<double>(layout, trans_a, m, alpha, a, lda, beta, c, ldc, epilogue), *b.impl_);
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha,
                     const BFloat16* a, std::int64_t lda, const PackedWeights<BFloat16>& b,
                     float beta, float* c, std::int64_t ldc, const Epilogue<float>& epilogue) {
  return impl_->GemmWith<BFloat16>(
      PackedArgs<Bf16Gemm>(layout, trans_a, m, alpha, a, lda, beta, c, ldc, epilogue), *b.impl_);
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, std::int32_t alpha,
                     const std::uint8_t* a, std::int64_t lda, const PackedWeights<std::int8_t>& b,
                     std::int32_t beta, std::int32_t* c, std::int64_t ldc,
                     const Epilogue<std::int32_t>& epilogue) {
  return impl_->GemmWith<std::int8_t>(
      PackedArgs<S8Gemm>(layout, trans_a, m, alpha, a, lda, beta, c, ldc, epilogue), *b.impl_);
}

Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, const std::uint8_t* a,
                     std::int64_t lda, const PackedWeights<std::int8_t>& b, float* c,
                     std::int64_t ldc, const Dequantization& dequantization,
                     const Epilogue<float>& epilogue) {
  return impl_->DequantizedWith(layout, trans_a, m, a, false, lda, *b.impl_, c, ldc,
                                dequantization, epilogue);
}
Status Runtime::Gemm(Layout layout, Trans trans_a, std::int64_t m, const std::int8_t* a,
                     std::int64_t lda, const PackedWeights<std::int8_t>& b, float* c,
                     std::int64_t ldc, const Dequantization& dequantization,
                     const Epilogue<float>& epilogue) {
  return impl_->DequantizedWith(layout, trans_a, m, reinterpret_cast<const std::uint8_t*>(a),
                                true, lda, *b.impl_, c, ldc, dequantization, epilogue);
}

template class PackedWeights<float>;
template class PackedWeights<double>;
template class PackedWeights<BFloat16>;
template class PackedWeights<std::int8_t>;
template Result<PackedWeights<float>> Runtime::PackB<float>(Layout, Trans, std::int64_t,
                                                            std::int64_t, std::int64_t,
                                                            const float*, std::int64_t) const;
template Result<PackedWeights<double>> Runtime::PackB<double>(Layout, Trans, std::int64_t,
                                                              std::int64_t, std::int64_t,
                                                              const double*, std::int64_t) const;
template Result<PackedWeights<BFloat16>> Runtime::PackB<BFloat16>(Layout, Trans, std::int64_t,
                                                                  std::int64_t, std::int64_t,
                                                                  const BFloat16*,
                                                                  std::int64_t) const;
template Result<PackedWeights<std::int8_t>> Runtime::PackB<std::int8_t>(
    Layout, Trans, std::int64_t, std::int64_t, std::int64_t, const std::int8_t*,
    std::int64_t) const;

template class FixedGemm<float>;
template class FixedGemm<double>;
template Result<FixedGemm<float>> Runtime::Bind<float>(Layout, Trans, Trans, std::int64_t,
                                                       std::int64_t, std::int64_t, float,
                                                       std::int64_t, std::int64_t, float,
                                                       std::int64_t) const;
template Result<FixedGemm<double>> Runtime::Bind<double>(Layout, Trans, Trans, std::int64_t,
                                                         std::int64_t, std::int64_t, double,
                                                         std::int64_t, std::int64_t, double,
                                                         std::int64_t) const;
template Result<FixedGemm<float>> Runtime::Bind<float>(Layout, Trans, Trans, std::int64_t,
                                                       std::int64_t, std::int64_t, float,
                                                       std::int64_t, std::int64_t, float,
                                                       std::int64_t, const Epilogue<float>&) const;
template Result<FixedGemm<double>> Runtime::Bind<double>(Layout, Trans, Trans, std::int64_t,
                                                         std::int64_t, std::int64_t, double,
                                                         std::int64_t, std::int64_t, double,
                                                         std::int64_t,
                                                         const Epilogue<double>&) const;

}  // namespace mmtune
