// `hreduce predict --validate`: the model against measurements on this
// machine. It probes (under mpirun, for the MPI figures between virtual
// nodes), then runs `hreduce bench` for layouts it can measure here — 1x1x2
// (threads), 1x2x1 (the node level, with and without zero copy) and 2x1x1
// (messages between virtual nodes) — and predicts each measured call from
// the probe alone: nothing is fitted to the bench's output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/model/report.hpp"

namespace hreduce::detail::model {

// |predicted / measured - 1| over the rows that are not oversubscribed.
struct ErrorSummary {
  int cases = 0, oversubscribed = 0;
  double median = 0, p90 = 0;
};
ErrorSummary summarise_errors(const std::vector<PredictedRow>& rows);
// Slowest / fastest run - 1 of each case measured more than once: how well
// one run of the bench foretells the next, the floor under any model's
// error on this machine.
ErrorSummary summarise_spread(const std::vector<PredictedRow>& rows);
// Each run of a case measured more than once against the median of its
// other runs, |run / others' median - 1|, pooled over runs and cases: the
// error of a model exactly right about one run of the bench, judged by
// the others. Where this exceeds a target, the target is below what this
// machine can show.
ErrorSummary summarise_run_against_others(const std::vector<PredictedRow>& rows);

// Returns the process exit status (0, or 1 when no measurement ran).
// `repeats`: each layout measured that many times in turns, a case's
// measurement the median of its runs.
// `layouts`: "NxPxT[-zc],..." in place of the four layouts above (on a
// machine with more cores, the layouts that show its scale).
int validate(const Request& request, bool quick, const std::optional<std::string>& json_path,
             const std::optional<std::string>& layouts = std::nullopt, int repeats = 1);

// The measurements of an earlier run (its --json records) predicted again
// on `prices`: to see what a change of the model does without measuring
// again, or to check the model against a run on another machine with that
// machine's probe file. The same tables and summaries as validate().
int validate_measured(const MachinePrices& prices, const std::string& measured_json,
                      const std::optional<std::string>& json_path);

}  // namespace hreduce::detail::model
