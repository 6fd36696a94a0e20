// Interleaved sampling: the implementations of one case take turns, one
// sample each per round, so that drift on a noisy machine (frequency, other
// load) hits all of them alike, and ratios come from one run.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "src/common/level_clock.hpp"
#include "src/compare/record.hpp"
#include "src/compare/runner.hpp"

namespace hreduce::detail::compare {

struct SamplingOptions {
  double min_seconds = 0.15;  // per case, timed samples of all implementations together
  int min_samples = 7;        // per implementation
  int max_samples = 101;
  double sample_seconds = 1e-3;  // a sample's batch grows until it lasts this long
  // Idle time before each sample. OpenMP and oneTBB workers keep spinning
  // for milliseconds after their work ends (libgomp: GOMP_SPINCOUNT), and on
  // a machine with few cores they would steal the next sample's cores.
  double settle_seconds = 0.01;
  // --breakdown: hreduce's own runner keeps the time per level of its calls.
  bool breakdown = false;
};

struct Summary {
  double median = 0, p25 = 0, p75 = 0;  // seconds per call
  int samples = 0;
  // Seconds per level of one call, for runners that keep them
  // (levels_at_median).
  std::optional<LevelSeconds> levels;
  double spread() const { return median > 0 ? (p75 - p25) / median : 0; }
};

// Per-call seconds of each runner, in the order given.
std::vector<Summary> sample_interleaved(const std::vector<Runner*>& runners,
                                        const SamplingOptions& options);

Summary summarize(std::vector<double> per_call_seconds);

// The levels of the sample that is the median (of the two middle ones,
// weighted as summarize() weights their times), so that a row's levels
// add up to its median wherever each sample's levels add up to its time:
// a mean or a median per level over several samples would not, where the
// samples spread widely or fall into a fast and a slow kind. Both vectors
// in sample order, of the same length.
LevelSeconds levels_at_median(const std::vector<double>& per_call_seconds,
                              const std::vector<LevelSeconds>& levels);

// A record's timing fields (and levels) from a summary; `moved_bytes`: the
// whole team's input and output bytes of one call.
void set_timing(Record& record, const Summary& summary, double moved_bytes);

}  // namespace hreduce::detail::compare
