// Threads as applications run them: mmtune's multi-threaded GEMM against the same call on one
// thread (and against the peers) in the situations that a tight benchmark loop never shows.
//
//   threads_bench --situation fresh --threads T    the first `--ms` milliseconds of a fresh
//                                                  process (run it once per thread count)
//   threads_bench --situation peer-spin            each GEMM right after a oneDNN call whose
//                                                  OpenMP threads spin-wait afterwards (with
//                                                  --peer-every N, every Nth GEMM)
//   threads_bench --situation layer-loop           GEMM, an elementwise pass over a buffer and
//                                                  a short sleep, as an inference layer loop
//   threads_bench --situation new-shapes           M changes every --calls-per-shape calls
//                                                  (default 20) to a value each runtime has not
//                                                  seen, as inputs of variable length do
//
// Options: --shape MxNxK (default 256x256x256), --ms N (time per series, default 300),
// --rounds N (alternations of the series, default 5). Prints one line per series: the median
// and the mean call time and GFLOP/s over all its calls (the mean is what a loop of calls
// costs, slow calls included; with new-shapes, M runs from the shape's M / 2 to 2.5 M, the
// median GFLOP/s is of the calls' rates and the mean of all their work). docs/PERFORMANCE.md
// ("Threads as applications run them") has the commands and figures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "comparison/peer_libraries.h"
#include "mmtune/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string situation;
  mmtune::Shape shape{256, 256, 256};
  int threads = 2;  // --situation fresh only
  double ms = 300.0;
  int rounds = 5;
  int peer_every = 1;  // --situation peer-spin: a oneDNN call before every Nth GEMM
  int calls_per_shape = 20;  // --situation new-shapes
};

[[noreturn]] void Usage(const std::string& error) {
  std::fprintf(stderr,
               "threads_bench: error: %s\nusage: threads_bench --situation "
               "fresh|peer-spin|layer-loop|new-shapes [--threads T] [--shape MxNxK] [--ms N] "
               "[--rounds N] [--peer-every N] [--calls-per-shape N]\n",
               error.c_str());
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage("missing value after " + flag);
    const std::string value = argv[++i];
    char* end = nullptr;
    if (flag == "--situation") {
      options.situation = value;
    } else if (flag == "--shape") {
      auto shape = mmtune::ParseShape(value);
      if (!shape || shape->m < 1 || shape->n < 1 || shape->k < 1) Usage("bad --shape " + value);
      options.shape = *shape;
    } else if (flag == "--threads") {
      options.threads = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || options.threads < 1) Usage("bad --threads " + value);
    } else if (flag == "--ms") {
      options.ms = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.ms > 0)) Usage("bad --ms " + value);
    } else if (flag == "--rounds") {
      options.rounds = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || options.rounds < 1) Usage("bad --rounds " + value);
    } else if (flag == "--peer-every") {
      options.peer_every = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || options.peer_every < 1) Usage("bad --peer-every " + value);
    } else if (flag == "--calls-per-shape") {
      options.calls_per_shape = static_cast<int>(std::strtol(value.c_str(), &end, 10));
      if (*end != '\0' || options.calls_per_shape < 1) Usage("bad --calls-per-shape " + value);
    } else {
      Usage("unknown option " + flag);
    }
  }
  if (options.situation != "fresh" && options.situation != "peer-spin" &&
      options.situation != "layer-loop" && options.situation != "new-shapes") {
    Usage("--situation must be fresh, peer-spin, layer-loop or new-shapes");
  }
  return options;
}

// The call times of one series, and each call's floating-point operations.
struct Series {
  std::vector<double> seconds;
  std::vector<double> flops;
  void Add(double s, double f) {
    seconds.push_back(s);
    flops.push_back(f);
  }
  double Mean() const {
    double sum = 0.0;
    for (double s : seconds) sum += s;
    return seconds.empty() ? 0.0 : sum / static_cast<double>(seconds.size());
  }
  double Median() const {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return sorted.empty() ? 0.0 : sorted[sorted.size() / 2];
  }
  // GFLOP/s of the median call's rate, and of all the calls' work in their time.
  double MedianGflops() const {
    std::vector<double> rates;
    for (std::size_t i = 0; i < seconds.size(); ++i) rates.push_back(flops[i] / seconds[i]);
    std::sort(rates.begin(), rates.end());
    return rates.empty() ? 0.0 : rates[rates.size() / 2] * 1e-9;
  }
  double MeanGflops() const {
    double work = 0.0;
    double time = 0.0;
    for (std::size_t i = 0; i < seconds.size(); ++i) {
      work += flops[i];
      time += seconds[i];
    }
    return time > 0.0 ? work / time * 1e-9 : 0.0;
  }
};

// Rows of A and C for M up to `rows`.
struct Buffers {
  std::vector<float> a, b, c;
  Buffers(const mmtune::Shape& s, std::int64_t rows)
      : a(static_cast<std::size_t>(rows * s.k), 0.5f),
        b(static_cast<std::size_t>(s.k * s.n), 0.25f),
        c(static_cast<std::size_t>(rows * s.n), 0.0f) {}
};

std::unique_ptr<mmtune::Runtime> OpenRuntime(int threads) {
  mmtune::RuntimeOptions options;
  options.max_threads = threads;
  options.record_from_environment = false;
  auto runtime = mmtune::Runtime::Open(options);
  if (!runtime) {
    std::fprintf(stderr, "threads_bench: error: %s\n", runtime.error().message.c_str());
    std::exit(1);
  }
  return std::move(*runtime);
}

// One GEMM implementation under test: mmtune on N threads, or a peer; `run(m)` computes the
// shape with M = m, and `next_rows` gives each call's M.
struct Impl {
  std::string name;
  std::function<void(std::int64_t)> run;
  std::function<std::int64_t()> next_rows;
};

void Print(const std::string& name, const Series& series) {
  std::printf("%-22s %8zu calls  median %8.1f us %7.1f GFLOP/s  mean %8.1f us %7.1f GFLOP/s\n",
              name.c_str(), series.seconds.size(), series.Median() * 1e6,
              series.MedianGflops(), series.Mean() * 1e6, series.MeanGflops());
}

// Calls `impl` for `ms` milliseconds, `before` ahead of each call (untimed).
void RunFor(const Impl& impl, const mmtune::Shape& s, double ms,
            const std::function<void()>& before, Series& series) {
  const auto end = Clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (Clock::now() < end) {
    if (before) before();
    const std::int64_t m = impl.next_rows();
    const auto start = Clock::now();
    impl.run(m);
    series.Add(std::chrono::duration<double>(Clock::now() - start).count(),
               2.0 * static_cast<double>(m) * static_cast<double>(s.n) *
                   static_cast<double>(s.k));
  }
}

// M for every call of one implementation: the shape's, or with `calls_per_shape` a new value
// every that many calls, from M / 2 to 2.5 M in an order that repeats none for 2 M shapes.
std::function<std::int64_t()> RowsOf(const mmtune::Shape& s, int calls_per_shape) {
  if (calls_per_shape == 0) return [m = s.m] { return m; };
  const std::int64_t range = 2 * s.m;
  std::int64_t step = 7;
  while (std::gcd(step, range) != 1) step += 2;  // visits every M of the range once
  return [first = std::max<std::int64_t>(1, s.m / 2), range, step, calls_per_shape,
          call = std::int64_t{0}]() mutable {
    const std::int64_t shape = call++ / calls_per_shape;
    return first + shape * step % range;
  };
}

// mmtune's runtime on one thread and on all, then the peers on all (`calls_per_shape`: see
// RowsOf, 0 for the shape's M on every call).
std::vector<Impl> Implementations(const mmtune::Shape& s, Buffers& buffers, int calls_per_shape) {
  std::vector<Impl> impls;
  static std::unique_ptr<mmtune::Runtime> one = OpenRuntime(1);
  static std::unique_ptr<mmtune::Runtime> all = OpenRuntime(0);
  for (mmtune::Runtime* runtime : {one.get(), all.get()}) {
    impls.push_back({"mmtune t" + std::to_string(runtime->max_threads()),
                     [runtime, s, &buffers](std::int64_t m) {
                       static_cast<void>(runtime->Gemm(
                           mmtune::Layout::kRowMajor, mmtune::Trans::kNo, mmtune::Trans::kNo, m,
                           s.n, s.k, 1.0f, buffers.a.data(), s.k, buffers.b.data(), s.n, 0.0f,
                           buffers.c.data(), s.n));
                     },
                     RowsOf(s, calls_per_shape)});
  }
  const int threads = all->max_threads();
  for (const mmtune::Peer& peer : mmtune::AvailablePeers()) {
    if (peer.sgemm == nullptr || peer.name == "libxsmm") continue;
    impls.push_back({peer.name + " t" + std::to_string(threads),
                     [peer, threads, s, &buffers](std::int64_t m) {
                       static_cast<void>(peer.sgemm(threads, m, s.n, s.k, buffers.a.data(),
                                                    buffers.b.data(), buffers.c.data()));
                     },
                     RowsOf(s, calls_per_shape)});
  }
  return impls;
}

}  // namespace

int main(int argc, char** argv) {
  mmtune::ReexecWithoutForcedOpenBlasCore("threads_bench", false, argv);
  const Options options = Parse(argc, argv);
  const mmtune::Shape& s = options.shape;
  const bool new_shapes = options.situation == "new-shapes";
  Buffers buffers(s, new_shapes ? 5 * s.m / 2 : s.m);

  if (options.situation == "fresh") {
    // Nothing may run before the first timed call: the pool starts with it, as in an application.
    auto runtime = OpenRuntime(options.threads);
    Impl impl{"mmtune t" + std::to_string(runtime->max_threads()),
              [&](std::int64_t m) {
                static_cast<void>(runtime->Gemm(mmtune::Layout::kRowMajor, mmtune::Trans::kNo,
                                                mmtune::Trans::kNo, m, s.n, s.k, 1.0f,
                                                buffers.a.data(), s.k, buffers.b.data(), s.n, 0.0f,
                                                buffers.c.data(), s.n));
              },
              RowsOf(s, 0)};
    // Consecutive windows of a tenth of the time each, so that a slow start shows as such.
    std::string line;
    Series all;
    for (int window = 0; window < 10; ++window) {
      Series part;
      RunFor(impl, s, options.ms / 10, {}, part);
      char text[32];
      std::snprintf(text, sizeof(text), " %.0f", part.MedianGflops());
      line += text;
      all.seconds.insert(all.seconds.end(), part.seconds.begin(), part.seconds.end());
      all.flops.insert(all.flops.end(), part.flops.begin(), part.flops.end());
    }
    Print(impl.name + " fresh", all);
    std::printf("  GFLOP/s per tenth:%s\n", line.c_str());
    return 0;
  }

  std::function<void()> before;
  std::vector<float> other(std::size_t{1} << 20, 1.0f);  // 4 MiB: the layer's other work
  const mmtune::Peer* onednn = nullptr;
  const std::vector<mmtune::Peer> peers = mmtune::AvailablePeers();
  for (const mmtune::Peer& peer : peers) {
    if (peer.name == "onednn") onednn = &peer;
  }
  if (options.situation == "peer-spin") {
    if (onednn == nullptr) {
      std::fprintf(stderr, "threads_bench: error: this build has no oneDNN\n");
      return 1;
    }
    // A small oneDNN GEMM on every core: its OpenMP workers then spin-wait (libgomp's default,
    // unless OMP_WAIT_POLICY says otherwise) while the next GEMMs run.
    auto peer_buffers = std::make_shared<Buffers>(mmtune::Shape{64, 64, 64}, 64);
    const int threads = static_cast<int>(std::thread::hardware_concurrency());
    const int every = options.peer_every;
    before = [onednn, peer_buffers, threads, every, call = 0]() mutable {
      if (call++ % every != 0) return;
      static_cast<void>(onednn->sgemm(threads, 64, 64, 64, peer_buffers->a.data(),
                                      peer_buffers->b.data(), peer_buffers->c.data()));
    };
  } else if (options.situation == "layer-loop") {
    before = [&other] {
      for (float& x : other) x = x * 0.999f + 0.001f;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    };
  }

  std::vector<Impl> impls =
      Implementations(s, buffers, new_shapes ? options.calls_per_shape : 0);
  std::map<std::string, Series> series;
  for (int round = 0; round < options.rounds; ++round) {
    for (const Impl& impl : impls) {
      RunFor(impl, s, options.ms / options.rounds, before, series[impl.name]);
    }
  }
  std::string situation = options.situation;
  if (situation == "peer-spin" && options.peer_every > 1) {
    situation += " every " + std::to_string(options.peer_every) + " calls";
  }
  if (new_shapes) {
    situation += " every " + std::to_string(options.calls_per_shape) + " calls, M from " +
                 std::to_string(std::max<std::int64_t>(1, s.m / 2));
  }
  std::printf("%s, f32 %lldx%lldx%lld, %d rounds of %.0f ms per series\n", situation.c_str(),
              static_cast<long long>(s.m), static_cast<long long>(s.n),
              static_cast<long long>(s.k), options.rounds, options.ms / options.rounds);
  for (const Impl& impl : impls) Print(impl.name, series[impl.name]);
  return 0;
}
