// `hreduce bench --mpi`'s table (rank 0 prints it): a row per collective
// and size with hreduce's and MPI's medians and their ratio, then the
// optional columns (--breakdown's levels, --reproducibility's levels),
// GB/s, hreduce's path inside each process, what it moved between
// processes, and the check.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hreduce/team.hpp"
#include "src/cli/args.hpp"
#include "src/compare/problem.hpp"
#include "src/compare/record.hpp"

namespace hreduce::cli {

// One collective and size, measured on both sides (hreduce alone with
// --implementations hreduce).
struct MpiRow {
  detail::compare::Record hreduce;
  std::optional<detail::compare::Record> mpi;   // absent with --implementations hreduce
  std::vector<detail::compare::Record> levels;  // hreduce at each --reproducibility level
  std::string path;                             // hreduce's shared-memory path inside each process
  std::string across;  // what it moves between processes (Team::across_processes)
  std::string check;   // "ok", or what differed
};

// The optional columns.
struct MpiTableShape {
  std::vector<Reproducibility> levels;  // --reproducibility, in order
  bool breakdown = false;               // --breakdown
  bool with_mpi = true;                 // MPI's own collective timed in turn (--implementations)
};

// Before the table: what runs, the buffers, the columns, the header.
void print_mpi_preamble(Team& team, const Args& args,
                        const std::vector<detail::compare::Collective>& collectives,
                        std::size_t largest, const MpiTableShape& shape);
void print_mpi_row(const MpiRow& row, const MpiTableShape& shape);
// Some side's samples spread past kNoisySpread (bench.hpp).
bool noisy(const MpiRow& row);

}  // namespace hreduce::cli
