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

// Returns the process exit status (0, or 1 when no measurement ran).
// `layouts`: "NxPxT[-zc],..." in place of the four layouts above (on a
// machine with more cores, the layouts that show its scale).
int validate(const Request& request, bool quick, const std::optional<std::string>& json_path,
             const std::optional<std::string>& layouts = std::nullopt);

}  // namespace hreduce::detail::model
