// `hreduce bench --breakdown`: the columns both faces of the bench add to
// each row (hreduce's µs per call in each level of the hierarchy, and their
// sum over the row's total), and the check that the levels add up.
#pragma once

#include "src/compare/record.hpp"

namespace hreduce::cli {

// The levels' sum may miss the row's total by this share before the
// bench's closing note counts the row (docs/benchmarking.md).
inline constexpr double kLevelsTolerance = 0.15;

// Rank 0, before the table: what the columns are.
void print_breakdown_legend();
void print_breakdown_header();
// Every level's µs per call and levels/total of `hreduce`'s record; "-"
// where the record has no levels.
void print_breakdown_cells(const detail::compare::Record& hreduce);
// Whether the record's levels add up to its median within kLevelsTolerance.
bool levels_add_up(const detail::compare::Record& hreduce);
// Under the table: how many rows' levels missed (nothing when none did).
void print_levels_note(int missed_rows, int rows);

}  // namespace hreduce::cli
