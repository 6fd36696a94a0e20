// The time-per-level section of `hreduce bench --plot` (with --breakdown):
// drawn by svg_plot.cpp's to_svg below its GB/s panels when some record
// carries levels.
#pragma once

#include <string>
#include <vector>

#include "src/compare/record.hpp"

namespace hreduce::detail::compare {

// The section's height for `columns` panels a row; 0 when no record has
// levels (then there is no section).
double level_section_height(const std::vector<Record>& records, int columns);
// Draws the section with its top edge at `top`.
void draw_level_section(std::string& out, const std::vector<Record>& records, double top,
                        int columns);

}  // namespace hreduce::detail::compare
