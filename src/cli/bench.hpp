// The two faces of `hreduce bench`: the comparison run on this process's
// team (the default), and hreduce against MPI's own collectives on a team
// over MPI processes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "args.hpp"
#include "hreduce/options.hpp"
#include "hreduce/team.hpp"
#include "src/compare/problem.hpp"

namespace hreduce::cli {

// A row whose samples spread more than this (interquartile range over the
// median, in any of its implementations) gets a '!': its ratios compare
// noise. With the 7 or more samples a row takes, the median itself is then
// uncertain by tens of percent, more than most differences the ratios show.
inline constexpr double kNoisySpread = 0.5;

// Vector sizes per member: 8 B, ×step, ... up to max_bytes, and max_bytes
// itself when the steps miss it.
std::vector<std::size_t> bench_sizes(std::size_t max_bytes, std::size_t step);
// --sizes: bytes per member, comma-separated plain integers >= 1, sorted,
// each once. Throws ArgumentError quoting a bad entry.
std::vector<std::size_t> explicit_sizes(const std::string& list);

// --collectives (default: all), for both faces; throws Error naming a bad one.
std::vector<detail::compare::Collective> chosen_collectives(const Args& args);

// --reproducibility (default: none), for both faces: the levels other than
// run_to_run, each once, in the order given; hreduce runs at each of them
// beside its plain (run_to_run) calls. Throws ArgumentError naming a bad one.
std::vector<Reproducibility> chosen_levels(const Args& args);
// With --mpi, --implementations: hreduce,mpi (the default: MPI's own
// collective timed in turn) or hreduce (alone); anything else throws.
bool mpi_timed(const Args& args);

// Under the table, when some rows were marked noisy (kNoisySpread).
void print_noise_note(int noisy_rows, int rows);

// Both return the process's exit status: non-zero when a result was wrong.
// With MPI, every process of MPI_COMM_WORLD calls run_mpi_bench; only rank 0
// prints and writes --json and --plot.
int run_comparison(Team& team, const Args& args, const std::vector<std::size_t>& sizes,
                   double min_seconds);
int run_mpi_bench(Team& team, const Args& args, const std::vector<std::size_t>& sizes,
                  double min_seconds);

}  // namespace hreduce::cli
