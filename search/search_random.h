// The strategies' random numbers. std::uniform_int_distribution is not used because its output
// differs between standard libraries; the helpers here derive everything from the raw 64-bit
// stream of std::mt19937_64, which the standard pins down, so a seed gives the same search
// everywhere.
#pragma once

#include <cstdint>
#include <random>

namespace mmtune {

class SearchRandom {
 public:
  explicit SearchRandom(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, bound); bound must be positive. Rejection sampling removes the modulo bias.
  std::uint64_t Below(std::uint64_t bound) {
    const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    while (true) {
      const std::uint64_t value = engine_();
      if (value >= threshold) return value % bound;
    }
  }

  // True with probability numerator / denominator.
  bool Chance(std::uint64_t numerator, std::uint64_t denominator) {
    return Below(denominator) < numerator;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace mmtune
