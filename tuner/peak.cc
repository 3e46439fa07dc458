#include "tuner/peak.h"

#include <algorithm>
#include <cmath>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "machine/cpu_binding.h"
#include "tuner/peak_kernels.h"

namespace mmtune {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Runs `work(thread)` on `threads` threads pinned to cores 0..threads-1, `warmup + samples` times
// in lock step, and returns the median aggregate rate in G units per second: the units all
// threads did in one sample over the slowest thread's time. `prepare(thread)` runs once on each
// thread before the first sample (first-touch of its memory).
double MedianRate(int threads, const PeakOptions& options,
                  const std::function<void(int)>& prepare,
                  const std::function<double(int)>& work) {
  const int rounds = options.warmup_samples + options.samples;
  std::vector<double> units(static_cast<std::size_t>(threads));
  std::vector<double> seconds(static_cast<std::size_t>(threads));
  std::vector<double> rates;
  std::barrier sync(threads);      // releases the threads into one sample together
  std::barrier done(threads + 1);
  std::vector<std::jthread> pool;
  bool bind_warned = false;
  std::vector<Status> bind_status(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t]() {
      bind_status[static_cast<std::size_t>(t)] = BindCurrentThreadToCore(t);
      if (prepare) prepare(t);
      for (int round = 0; round < rounds; ++round) {
        sync.arrive_and_wait();
        const auto start = Clock::now();
        units[static_cast<std::size_t>(t)] = work(t);
        seconds[static_cast<std::size_t>(t)] = SecondsSince(start);
        done.arrive_and_wait();  // the caller reads this round's numbers
        done.arrive_and_wait();  // ... and has finished reading them
      }
    });
  }
  for (int round = 0; round < rounds; ++round) {
    done.arrive_and_wait();
    const double total_units = [&] {
      double sum = 0.0;
      for (double u : units) sum += u;
      return sum;
    }();
    const double slowest = *std::max_element(seconds.begin(), seconds.end());
    if (round >= options.warmup_samples && slowest > 0.0) {
      rates.push_back(total_units / slowest * 1e-9);
    }
    done.arrive_and_wait();
  }
  pool.clear();  // joins
  for (const Status& status : bind_status) {
    if (!status && !bind_warned) {
      Log(LogLevel::kWarning, "measuring unpinned: " + status.error().message);
      bind_warned = true;
    }
  }
  return rates.empty() ? 0.0 : Median(rates);
}

// Iterations of `loop` that take about `seconds` on one core.
std::int64_t CalibrateIterations(PeakLoop loop, double seconds) {
  std::int64_t iterations = 1024;
  for (;;) {
    const auto start = Clock::now();
    loop(iterations);
    const double elapsed = SecondsSince(start);
    if (elapsed >= seconds / 8 || iterations >= (std::int64_t{1} << 40)) {
      return std::max<std::int64_t>(1, static_cast<std::int64_t>(
                                           static_cast<double>(iterations) * seconds / elapsed));
    }
    iterations *= 4;
  }
}

Throughput MeasureLoop(PeakLoop loop, int cores, const PeakOptions& options,
                       const PeakProgress& progress, const std::string& name) {
  const std::int64_t iterations = CalibrateIterations(loop, options.sample_seconds);
  auto work = [&](int) { return loop(iterations); };
  Throughput result;
  if (progress) progress(name + ", 1 core");
  result.one_core = MedianRate(1, options, {}, work);
  if (cores > 1) {
    if (progress) progress(name + ", " + std::to_string(cores) + " cores");
    result.all_cores = MedianRate(cores, options, {}, work);
  } else {
    result.all_cores = result.one_core;
  }
  return result;
}

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};

Result<double> MeasureReadBandwidth(ReadLoop read_sum, int threads, std::size_t bytes,
                                    const PeakOptions& options) {
  // Each thread owns an equal slice, a multiple of 16 doubles, that it touches first so the
  // pages sit on its NUMA node.
  const std::size_t per_thread =
      std::max<std::size_t>(16, bytes / sizeof(double) / static_cast<std::size_t>(threads) /
                                    16 * 16);
  const std::size_t total = per_thread * static_cast<std::size_t>(threads);
  std::unique_ptr<double, FreeDeleter> buffer(
      static_cast<double*>(std::aligned_alloc(64, total * sizeof(double))));
  if (!buffer) {
    return MakeError(ErrorCode::kIo, "cannot allocate " + std::to_string(total * 8 >> 20) +
                                         " MiB for the bandwidth measurement");
  }
  double* data = buffer.get();
  auto slice = [&](int t) { return data + per_thread * static_cast<std::size_t>(t); };
  std::vector<int> passes(static_cast<std::size_t>(threads), 1);
  auto prepare = [&](int t) {
    double* begin = slice(t);
    for (std::size_t i = 0; i < per_thread; ++i) begin[i] = 1.0 + static_cast<double>(i & 7);
    // As many passes as fill one sample: one timed pass tells how long a pass takes.
    const auto start = Clock::now();
    volatile double sink = read_sum(begin, per_thread);
    static_cast<void>(sink);
    const double elapsed = SecondsSince(start);
    passes[static_cast<std::size_t>(t)] =
        std::max(1, static_cast<int>(options.sample_seconds / std::max(elapsed, 1e-9)));
  };
  auto work = [&](int t) {
    double sum = 0.0;
    const int count = passes[static_cast<std::size_t>(t)];
    for (int pass = 0; pass < count; ++pass) sum += read_sum(slice(t), per_thread);
    volatile double sink = sum;
    static_cast<void>(sink);
    return static_cast<double>(count) * static_cast<double>(per_thread * sizeof(double));
  };
  return MedianRate(threads, options, prepare, work);
}

// One core's read bandwidth over the first `size` bytes of one buffer, for each size of `sizes`
// (ascending): one allocation for the whole sweep, touched first by the measuring thread so that
// its pages sit on that core's NUMA node.
Result<std::vector<ReadSweepPoint>> MeasureReadSweep(ReadLoop read_sum,
                                                     const std::vector<std::uint64_t>& sizes,
                                                     const PeakOptions& options,
                                                     const PeakProgress& progress) {
  std::vector<ReadSweepPoint> sweep;
  if (sizes.empty()) return sweep;
  const std::size_t total = static_cast<std::size_t>(sizes.back() / sizeof(double)) / 16 * 16;
  std::unique_ptr<double, FreeDeleter> buffer(
      static_cast<double*>(std::aligned_alloc(64, total * sizeof(double))));
  if (!buffer) {
    return MakeError(ErrorCode::kIo, "cannot allocate " + std::to_string(sizes.back() >> 20) +
                                         " MiB for the read-bandwidth sweep");
  }
  double* data = buffer.get();
  bool touched = false;
  for (const std::uint64_t size : sizes) {
    if (progress) progress("read bandwidth of " + std::to_string(size >> 10) + " KiB, 1 core");
    const std::size_t count = static_cast<std::size_t>(size / sizeof(double)) / 16 * 16;
    int passes = 1;
    auto prepare = [&](int) {
      if (!touched) {
        for (std::size_t i = 0; i < total; ++i) data[i] = 1.0 + static_cast<double>(i & 7);
        touched = true;
      }
      const auto start = Clock::now();
      volatile double sink = read_sum(data, count);
      static_cast<void>(sink);
      passes = std::max(1, static_cast<int>(options.sample_seconds /
                                            std::max(SecondsSince(start), 1e-9)));
    };
    auto work = [&](int) {
      double sum = 0.0;
      for (int pass = 0; pass < passes; ++pass) sum += read_sum(data, count);
      volatile double sink = sum;
      static_cast<void>(sink);
      return static_cast<double>(passes) * static_cast<double>(count * sizeof(double));
    };
    sweep.push_back({size, MedianRate(1, options, prepare, work)});
  }
  return sweep;
}

// One core's L2 (the first level-2 data or unified cache hwloc lists); 1 MiB where none is.
std::uint64_t L2Bytes(const Topology& topology) {
  for (const CacheLevel& cache : topology.caches) {
    if (cache.level == 2 && cache.kind != CacheKind::kInstruction && cache.size_bytes > 0) {
      return cache.size_bytes;
    }
  }
  return 1u << 20;
}

std::uint64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes)
             : 0;
}

}  // namespace

double ZmmFmasPerCycle(double zmm_gflops, double ymm_gflops) {
  if (!(zmm_gflops > 0.0) || !(ymm_gflops > 0.0)) return 0.0;
  return std::clamp(std::round(zmm_gflops / ymm_gflops), 1.0, 2.0);
}

std::uint64_t EffectiveLlcBytes(const std::vector<ReadSweepPoint>& sweep, double memory_gbs) {
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    if (i > 0 && sweep[i].gbs < kCacheSpeedup * memory_gbs) break;
    bytes = sweep[i].bytes;
  }
  return bytes;
}

// At most 1 GiB: a guest may report private L3s of hundreds of MiB, and 8x those alone (GiBs a
// process) send a few concurrent `mmtune tune` runs into swap. Past 1 GiB the buffer may sit in
// such an L3, and the figure is then a cache's bandwidth: the price of a bound that holds on any
// machine.
std::size_t DefaultBandwidthBytes(const Topology& topology, std::uint64_t physical_memory_bytes) {
  constexpr std::uint64_t kMinBytes = 256ull << 20;
  constexpr std::uint64_t kMaxBytes = 1ull << 30;
  std::uint64_t last_level = 0;
  for (const CacheLevel& cache : topology.caches) {
    if (cache.kind == CacheKind::kInstruction) continue;
    last_level = std::max<std::uint64_t>(last_level, cache.size_bytes * cache.Instances());
  }
  std::uint64_t bytes = std::clamp<std::uint64_t>(8 * last_level, kMinBytes, kMaxBytes);
  if (physical_memory_bytes > 0) bytes = std::min(bytes, physical_memory_bytes / 8);
  return static_cast<std::size_t>(bytes);
}

Result<PeakReport> MeasurePeaks(const Machine& machine, const PeakOptions& options,
                                const PeakProgress& progress) {
  if (options.samples < 1 || options.warmup_samples < 0 || options.sample_seconds <= 0.0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "peak measurement needs samples >= 1, warm-up >= 0 and a positive sample "
                     "length");
  }
  PeakReport report;
  report.isa = machine.kernel_isa;
  report.cores = std::max(1, std::min(machine.topology.cores, AllowedCoreCount()));
  const PeakKernels kernels = PeakKernelsFor(machine.kernel_isa, machine.cpu);
  auto measure = [&](PeakLoop loop, const char* name) -> std::optional<Throughput> {
    if (loop == nullptr) return std::nullopt;
    return MeasureLoop(loop, report.cores, options, progress, name);
  };
  report.f32_fma = measure(kernels.f32_fma, "f32 FMA");
  if (machine.kernel_isa == IsaLevel::kAvx512 && report.f32_fma) {
    const PeakLoop ymm = PeakKernelsFor(IsaLevel::kAvx2, machine.cpu).f32_fma;
    if (ymm != nullptr) {
      report.ymm_f32_fma_gflops =
          MeasureLoop(ymm, 1, options, progress, "f32 FMA on 256-bit vectors").one_core;
      report.zmm_fmas_per_cycle =
          ZmmFmasPerCycle(report.f32_fma->one_core, report.ymm_f32_fma_gflops);
    }
  }
  if (!ProbedCoreFacts(machine, report.zmm_fmas_per_cycle).empty()) {
    if (progress) progress("core facts, 1 core");
    report.core_facts = CalibrateCoreFacts(machine, report.zmm_fmas_per_cycle, options.samples,
                                           options.sample_seconds);
  }
  report.f64_fma = measure(kernels.f64_fma, "f64 FMA");
  report.bf16_dot = measure(kernels.bf16_dot, "bf16 dot product");
  report.int8_dot = measure(kernels.int8_dot, "int8 dot product");

  const std::size_t bytes = options.bandwidth_bytes != 0
                                ? options.bandwidth_bytes
                                : DefaultBandwidthBytes(machine.topology, PhysicalMemoryBytes());
  if (progress) progress("memory read bandwidth, 1 core");
  auto one = MeasureReadBandwidth(kernels.read_sum, 1, bytes, options);
  if (!one) return one.error();
  report.memory_read_gbs.one_core = *one;
  report.memory_read_gbs.all_cores = *one;
  if (report.cores > 1) {
    if (progress) progress("memory read bandwidth, " + std::to_string(report.cores) + " cores");
    auto all = MeasureReadBandwidth(kernels.read_sum, report.cores, bytes, options);
    if (!all) return all.error();
    report.memory_read_gbs.all_cores = *all;
  }
  // Fewer samples than the peaks': the sweep's points differ by far more than their noise, and
  // each point's calibrating pass warms it.
  PeakOptions sweep_options = options;
  sweep_options.warmup_samples = 0;
  sweep_options.samples = std::min(options.samples, 3);
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = L2Bytes(machine.topology); size <= bytes / 2; size *= 2) {
    sizes.push_back(size);
  }
  auto sweep = MeasureReadSweep(kernels.read_sum, sizes, sweep_options, progress);
  if (!sweep) return sweep.error();
  report.read_sweep = std::move(*sweep);
  report.effective_llc_bytes =
      EffectiveLlcBytes(report.read_sweep, report.memory_read_gbs.one_core);
  return report;
}

void to_json(nlohmann::json& json, const PeakReport& r) {
  auto entry = [](const std::optional<Throughput>& t) {
    if (!t) return nlohmann::json(nullptr);
    return nlohmann::json{{"one_core", t->one_core}, {"all_cores", t->all_cores}};
  };
  json = {{"isa", ToString(r.isa)},
          {"cores", r.cores},
          {"f32_fma_gflops", entry(r.f32_fma)},
          {"f64_fma_gflops", entry(r.f64_fma)},
          {"bf16_dot_gops", entry(r.bf16_dot)},
          {"int8_dot_gops", entry(r.int8_dot)},
          {"memory_read_gbs", entry(r.memory_read_gbs)}};
  if (!r.read_sweep.empty()) {
    nlohmann::json sweep = nlohmann::json::array();
    for (const ReadSweepPoint& point : r.read_sweep) sweep.push_back({point.bytes, point.gbs});
    json["read_sweep_bytes_gbs"] = std::move(sweep);
    json["effective_llc_bytes"] = r.effective_llc_bytes;
  }
  if (r.zmm_fmas_per_cycle > 0.0) {
    json["ymm_f32_fma_gflops"] = r.ymm_f32_fma_gflops;
    json["zmm_fmas_per_cycle"] = r.zmm_fmas_per_cycle;
  }
  if (!r.core_facts.empty()) {
    nlohmann::json facts = nlohmann::json::object();
    for (const CoreFactProbe& probe : r.core_facts) {
      facts[std::string(probe.fact)] = {
          {"holds", probe.holds ? nlohmann::json(*probe.holds) : nlohmann::json(nullptr)},
          {"speedup", probe.speedup},
          {"threshold", probe.threshold}};
    }
    json["core_facts"] = std::move(facts);
  }
}

}  // namespace mmtune
