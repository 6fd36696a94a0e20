#include "src/cli/mpi_bench_table.hpp"

#include <algorithm>
#include <cstdio>

#include "src/cli/bench.hpp"
#include "src/cli/breakdown_columns.hpp"
#include "src/cli/mpi_preamble.hpp"
#include "src/compare/text_output.hpp"

namespace hreduce::cli {
namespace {

namespace cmp = detail::compare;

// Each level's columns, "[L] us" and "[L]/hreduce", at least 12 wide.
std::vector<std::string> level_headers(const std::vector<Reproducibility>& levels) {
  std::vector<std::string> headers;
  for (Reproducibility level : levels) {
    const std::string name(to_string(level));
    headers.push_back("[" + name + "] us");
    headers.push_back("[" + name + "]/hreduce");
  }
  return headers;
}

int column_width(const std::string& header) {
  return static_cast<int>(std::max<std::size_t>(12, header.size()));
}

void print_header(const MpiTableShape& shape) {
  std::printf("%-22s %14s %12s %12s %12s ", "collective", "bytes/member", "hreduce us", "mpi us",
              "mpi/hreduce");
  if (shape.breakdown) print_breakdown_header();
  for (const std::string& header : level_headers(shape.levels)) {
    std::printf(" %*s", column_width(header), header.c_str());
  }
  std::printf(" %10s %10s  %-32s %s\n", "GB/s", "path", "across processes", "check");
}

}  // namespace

bool noisy(const MpiRow& row) {
  bool any = row.hreduce.spread > kNoisySpread || (row.mpi && row.mpi->spread > kNoisySpread);
  for (const cmp::Record& r : row.levels) any |= r.spread > kNoisySpread;
  return any;
}

void print_mpi_row(const MpiRow& row, const MpiTableShape& shape) {
  const cmp::Record& ours = row.hreduce;
  std::printf("%-22s %14s %12.2f", ours.collective.c_str(),
              cmp::human_bytes(ours.bytes_per_member).c_str(), ours.median_seconds * 1e6);
  if (row.mpi) {
    std::printf(" %12.2f %12.2f", row.mpi->median_seconds * 1e6,
                row.mpi->median_seconds / ours.median_seconds);
  } else {
    std::printf(" %12s %12s", "-", "-");
  }
  std::printf("%c", noisy(row) ? '!' : ' ');
  if (shape.breakdown) print_breakdown_cells(ours);
  const std::vector<std::string> headers = level_headers(shape.levels);
  for (std::size_t i = 0; i < row.levels.size(); ++i) {
    const double seconds = row.levels[i].median_seconds;
    std::printf(" %*.2f %*.2f", column_width(headers[2 * i]), seconds * 1e6,
                column_width(headers[2 * i + 1]), seconds / ours.median_seconds);
  }
  std::printf(" %10.2f %10s  %-32s %s\n", ours.gbps, row.path.c_str(), row.across.c_str(),
              row.check.c_str());
  std::fflush(stdout);
}

void print_mpi_preamble(Team& team, const Args& args,
                        const std::vector<cmp::Collective>& collectives, std::size_t largest,
                        const MpiTableShape& shape) {
  print_explanations(team, collectives, largest);
  std::printf("  hreduce's buffers: %s\n",
              args.has("--zero-copy")
                  ? "from Team::allocate (the node's processes read and write them in place)"
                  : "private (copied through the node's staging chunks)");
  std::printf(
      "mpi/hreduce: MPI's time / hreduce's time (> 1: hreduce faster); '!' after it: hreduce's "
      "or MPI's samples spread more than %.0f%% (interquartile range / median), so the ratio is "
      "noise (a busy machine: rerun on a quiet one)\n",
      kNoisySpread * 100);
  if (shape.breakdown) print_breakdown_legend();
  if (!shape.levels.empty()) {
    std::printf(
        "[L]: hreduce with per-call reproducibility = L, sampled in turn with the rest; "
        "[L]/hreduce: its time / hreduce's (run_to_run) time (> 1: what L costs)\n");
  }
  print_header(shape);
}

}  // namespace hreduce::cli
