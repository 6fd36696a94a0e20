// What `hreduce predict` prints and writes: one row per call, the JSON
// records (docs/model.md, "The JSON") and the plot.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/model/prediction.hpp"
#include "src/probe/json.hpp"

namespace hreduce::detail::model {

struct PredictedRow {
  CallCase call;
  Prediction hreduce;
  std::vector<FlatPrediction> flat;
  std::optional<double> measured_seconds;  // --validate only: the median of the runs
  std::vector<double> measured_runs;       // --validate: each run's median, in order
  std::vector<double> predicted_runs;      // --validate: each run's, from its own probe
  bool oversubscribed = false;
  std::string layout;   // NODESxPROCSxTHREADS
  std::string variant;  // --validate: "zero copy", ...
};

// What to predict: empty lists take the defaults (every collective; 8 B to
// 16 MiB by ×8; double).
struct Request {
  Layout layout;
  std::vector<std::string> collectives;
  std::vector<std::size_t> sizes;
  std::vector<std::string> types;
  ModelSettings settings;
};
std::vector<std::string> collectives_or_default(const Request& request);
std::vector<std::size_t> sizes_or_default(const Request& request);
std::vector<std::string> types_or_default(const Request& request);

// Every collective × type × size of the request, hreduce and flat MPI.
std::vector<PredictedRow> predict_rows(const MachinePrices& prices, const Topology& node,
                                       const Request& request);

// The fastest flat algorithm that serves the call (nullptr: none).
const FlatPrediction* best_flat(const PredictedRow& row);

probe::Json to_json(const PredictedRow& row, long long members);
void print_table(const std::vector<PredictedRow>& rows, bool measured);
// Predicted seconds against bytes per member, one panel per collective and
// type: hreduce and each flat algorithm (and the measurement, if any).
void write_plot(const std::string& path, const std::vector<PredictedRow>& rows, long long members,
                const std::string& title);

}  // namespace hreduce::detail::model
