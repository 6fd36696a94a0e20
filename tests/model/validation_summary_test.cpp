// The validation's summaries against hand-computed cases: the model's
// |error| over the cases that are not oversubscribed, and the runs' own
// spread (slowest / fastest - 1), the floor under any model's error.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "src/model/validation.hpp"

namespace md = hreduce::detail::model;

namespace {

md::PredictedRow row(double predicted, std::vector<double> runs, bool oversubscribed = false) {
  md::PredictedRow r;
  r.hreduce.seconds = predicted;
  std::vector<double> sorted = runs;
  std::sort(sorted.begin(), sorted.end());
  r.measured_seconds = sorted[sorted.size() / 2];
  r.measured_runs = std::move(runs);
  r.oversubscribed = oversubscribed;
  return r;
}

}  // namespace

TEST_CASE("the model's error: median and 90th percentile of |predicted / measured - 1|",
          "[model]") {
  // Errors 10 %, 20 %, 50 %, 0 % (and an oversubscribed 900 %, not counted).
  const std::vector<md::PredictedRow> rows = {row(1.1, {1.0}), row(0.8, {1.0}), row(3.0, {2.0}),
                                              row(2.0, {2.0}), row(10.0, {1.0}, true)};
  const md::ErrorSummary s = md::summarise_errors(rows);
  CHECK(s.cases == 4);
  CHECK(s.oversubscribed == 1);
  CHECK(s.median == Approx(0.15));  // between 10 % and 20 %
  CHECK(s.p90 == Approx(0.5));
}

TEST_CASE("the runs' spread: slowest / fastest - 1 of the cases measured more than once",
          "[model]") {
  // Spreads 0 %, 25 %, 100 %; a case measured once has none; an
  // oversubscribed one is not counted.
  const std::vector<md::PredictedRow> rows = {row(1, {2.0, 2.0}), row(1, {1.0, 1.25, 1.1}),
                                              row(1, {4.0, 2.0}), row(1, {3.0}),
                                              row(1, {1.0, 9.0}, true)};
  const md::ErrorSummary s = md::summarise_spread(rows);
  CHECK(s.cases == 3);
  CHECK(s.median == Approx(0.25));
  CHECK(s.p90 == Approx(1.0));
  CHECK(md::summarise_spread({row(1, {1.0})}).cases == 0);
}

TEST_CASE("the floor: each run against the median of the case's other runs", "[model]") {
  // Runs 1.0, 1.2, 1.5: 1.0 against 1.35 (-25.9 %), 1.2 against 1.25
  // (-4 %), 1.5 against 1.1 (+36.4 %). Runs 2, 2: 0 % twice. A case
  // measured once, or oversubscribed, has none.
  const std::vector<md::PredictedRow> rows = {row(1, {1.0, 1.2, 1.5}), row(1, {2.0, 2.0}),
                                              row(1, {3.0}), row(1, {1.0, 9.0}, true)};
  const md::ErrorSummary s = md::summarise_run_against_others(rows);
  CHECK(s.cases == 5);
  CHECK(s.median == Approx(0.04));
  CHECK(s.p90 == Approx(1.5 / 1.1 - 1));
}
