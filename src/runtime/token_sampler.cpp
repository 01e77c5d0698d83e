// Greedy, temperature and top-k choice of a token from logits, with
// SplitMix64 as the random source (the algorithm is in et_ops/generate.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "et_ops/generate.h"

namespace et_ops {
namespace {

// SplitMix64's next output as a double in [0, 1) (53 bits).
double next_uniform(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

TokenSampler::TokenSampler(double temperature, std::size_t top_k, uint64_t seed)
    : temperature_(temperature), top_k_(top_k), state_(seed) {}

Result<int64_t> TokenSampler::next(const float* logits, std::size_t vocab_size) {
  for (std::size_t i = 0; i < vocab_size; ++i)
    if (std::isnan(logits[i])) return Status(StatusCode::Invalid, fmt::format("logits[{}] is NaN", i));
  if (vocab_size == 0) return Status(StatusCode::Invalid, "the logits are empty");
  if (temperature_ == 0.0) return static_cast<int64_t>(std::max_element(logits, logits + vocab_size) - logits);
  candidates_.clear();
  for (std::size_t i = 0; i < vocab_size; ++i) candidates_.emplace_back(logits[i], static_cast<int64_t>(i));
  if (top_k_ > 0 && top_k_ < vocab_size) {
    const auto better = [](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::nth_element(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(top_k_ - 1),
                     candidates_.end(), better);
    candidates_.resize(top_k_);
    std::sort(candidates_.begin(), candidates_.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
  }
  float largest = candidates_[0].first;
  for (const auto& c : candidates_) largest = std::max(largest, c.first);
  weights_.clear();
  double total = 0.0;
  for (const auto& c : candidates_) {
    weights_.push_back(std::exp((static_cast<double>(c.first) - largest) / temperature_));
    total += weights_.back();
  }
  const double target = next_uniform(state_) * total;
  double running = 0.0;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    running += weights_[i];
    if (running > target) return candidates_[i].second;
  }
  return candidates_.back().second;
}

}  // namespace et_ops
