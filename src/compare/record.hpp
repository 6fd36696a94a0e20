// One measured point of a comparison run: what `hreduce bench --json` writes
// and what the ratio table and the plot are drawn from.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hreduce::detail::compare {

// One level's part of a call (`hreduce bench --breakdown`): the level's
// name (inside_process, node_segment, between_nodes, waiting:
// src/common/level_clock.hpp) and its seconds per call.
struct LevelTime {
  std::string level;
  double seconds = 0;
};

struct Record {
  std::string collective;  // reduce, allreduce, reduce_scatter_block, scan, exscan
  std::string
      implementation;  // hreduce, openmp_reduction, openmp_sliced, tbb, limit, mpi_flat, mpi
  std::string type;    // double, int32, double_int (MINLOC)
  std::string op;      // sum, minloc
  int members = 0;
  std::size_t bytes_per_member = 0;  // one member's input vector
  double median_seconds = 0;         // per call
  double gbps = 0;                   // (input + output bytes of the whole team) / median
  double spread = 0;                 // (75th - 25th percentile) / median
  int samples = 0;
  // With --breakdown, hreduce's records: every level, in level order, per
  // call, of the sample that is the median (levels_at_median in
  // sampling.hpp); they add up to about median_seconds. Empty otherwise.
  std::vector<LevelTime> levels;
};

// A JSON array of records, one object per line; a record with levels gets
// "levels": {name: seconds, ...}.
std::string to_json(const std::vector<Record>& records);
// Throws Error naming `path` when the file cannot be written.
void write_json(const std::string& path, const std::vector<Record>& records);

// GB/s against bytes per member, log-log, one panel per (collective, type),
// one line per implementation; below them, when records carry levels, a
// panel per (collective, type) of bars stacked by level (svg_levels.hpp).
// A standalone SVG document.
std::string to_svg(const std::vector<Record>& records, const std::string& title);
void write_svg(const std::string& path, const std::vector<Record>& records,
               const std::string& title);

}  // namespace hreduce::detail::compare
