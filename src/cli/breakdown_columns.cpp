#include "src/cli/breakdown_columns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace hreduce::cli {
namespace {

namespace cmp = detail::compare;

// The level columns, in the order of the records' levels
// (src/common/level_clock.hpp).
constexpr const char* kLevelColumns[] = {"inside_process", "node_segment", "between_nodes",
                                         "waiting"};
constexpr const char* kSumColumn = "levels/total";

int width_of(const char* header) {
  return static_cast<int>(std::max<std::size_t>(9, std::string(header).size()));
}

double levels_sum(const cmp::Record& r) {
  double sum = 0;
  for (const cmp::LevelTime& level : r.levels) sum += level.seconds;
  return sum;
}

}  // namespace

void print_breakdown_legend() {
  std::printf(
      "columns inside_process, node_segment, between_nodes, waiting: hreduce's us per call in "
      "each level (the mean over its members, in the sample that is the median); levels/total: "
      "their sum / hreduce us (1 within %.0f%%: the levels account for the call)\n",
      kLevelsTolerance * 100);
}

void print_breakdown_header() {
  for (const char* header : kLevelColumns) std::printf(" %*s", width_of(header), header);
  std::printf(" %*s", width_of(kSumColumn), kSumColumn);
}

void print_breakdown_cells(const cmp::Record& hreduce) {
  for (std::size_t i = 0; i < std::size(kLevelColumns); ++i) {
    const int width = width_of(kLevelColumns[i]);
    if (i < hreduce.levels.size()) {
      std::printf(" %*.3f", width, hreduce.levels[i].seconds * 1e6);
    } else {
      std::printf(" %*s", width, "-");
    }
  }
  if (hreduce.levels.empty() || hreduce.median_seconds <= 0) {
    std::printf(" %*s", width_of(kSumColumn), "-");
  } else {
    std::printf(" %*.2f", width_of(kSumColumn), levels_sum(hreduce) / hreduce.median_seconds);
  }
}

bool levels_add_up(const cmp::Record& hreduce) {
  if (hreduce.levels.empty() || hreduce.median_seconds <= 0) return false;
  return std::abs(levels_sum(hreduce) / hreduce.median_seconds - 1) <= kLevelsTolerance;
}

void print_levels_note(int missed_rows, int rows) {
  if (missed_rows == 0) return;
  std::printf(
      "note: in %d of %d rows the levels add up to more than %.0f%% off hreduce us (see "
      "levels/total): samples that spread widely, or members that ran apart "
      "(docs/benchmarking.md)\n",
      missed_rows, rows, kLevelsTolerance * 100);
}

}  // namespace hreduce::cli
