#include "src/compare/sampling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace hreduce::detail::compare {
namespace {

double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * (sorted.size() - 1);
  const auto below = static_cast<std::size_t>(at);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

void settle(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// The batch a runner needs for one sample to last `seconds`.
int calibrate(Runner& runner, const SamplingOptions& options) {
  const double seconds = options.sample_seconds;
  int calls = 1;
  while (calls < (1 << 22)) {
    settle(options.settle_seconds);
    const double took = runner.seconds_for(calls);
    if (took >= seconds) break;
    const double factor = took > 0 ? seconds / took : 16;
    calls =
        static_cast<int>(std::min(calls * std::clamp(factor * 1.2, 2.0, 16.0), double{1 << 22}));
  }
  return calls;
}

}  // namespace

void set_timing(Record& record, const Summary& summary, double moved_bytes) {
  record.median_seconds = summary.median;
  record.gbps = summary.median > 0 ? moved_bytes / summary.median / 1e9 : 0;
  record.spread = summary.spread();
  record.samples = summary.samples;
  record.levels.clear();
  if (!summary.levels) return;
  for (CallLevel level : kAllCallLevels) {
    record.levels.push_back({std::string(level_name(level)), (*summary.levels)[level]});
  }
}

LevelSeconds levels_at_median(const std::vector<double>& per_call_seconds,
                              const std::vector<LevelSeconds>& levels) {
  const std::size_t n = std::min(per_call_seconds.size(), levels.size());
  if (n == 0) return {};
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return per_call_seconds[a] < per_call_seconds[b];
  });
  // As quantile() interpolates the median's time, so its levels.
  const double at = 0.5 * static_cast<double>(n - 1);
  const auto below = static_cast<std::size_t>(at);
  const std::size_t above = std::min(below + 1, n - 1);
  const double weight = at - static_cast<double>(below);
  LevelSeconds result = levels[order[below]].scaled(1 - weight);
  result += levels[order[above]].scaled(weight);
  return result;
}

Summary summarize(std::vector<double> per_call_seconds) {
  Summary s;
  if (per_call_seconds.empty()) return s;
  std::sort(per_call_seconds.begin(), per_call_seconds.end());
  s.median = quantile(per_call_seconds, 0.5);
  s.p25 = quantile(per_call_seconds, 0.25);
  s.p75 = quantile(per_call_seconds, 0.75);
  s.samples = static_cast<int>(per_call_seconds.size());
  return s;
}

std::vector<Summary> sample_interleaved(const std::vector<Runner*>& runners,
                                        const SamplingOptions& options) {
  std::vector<int> batch;
  for (Runner* r : runners) batch.push_back(calibrate(*r, options));
  std::vector<std::vector<double>> samples(runners.size());
  std::vector<std::vector<LevelSeconds>> levels(runners.size());
  double timed = 0;  // settling does not count towards min_seconds
  for (int round = 0; round < options.max_samples; ++round) {
    if (round >= options.min_samples && timed >= options.min_seconds) break;
    // Rotate who goes first, so no implementation always follows the same one.
    for (std::size_t k = 0; k < runners.size(); ++k) {
      const std::size_t i = (k + round) % runners.size();
      settle(options.settle_seconds);
      const double seconds = runners[i]->seconds_for(batch[i]);
      timed += seconds;
      samples[i].push_back(seconds / batch[i]);
      if (auto per_call = runners[i]->levels_per_call()) levels[i].push_back(*per_call);
    }
  }
  std::vector<Summary> result;
  for (std::size_t i = 0; i < runners.size(); ++i) {
    result.push_back(summarize(samples[i]));
    if (!levels[i].empty()) {
      result.back().levels = levels_at_median(samples[i], levels[i]);
    }
  }
  return result;
}

}  // namespace hreduce::detail::compare
