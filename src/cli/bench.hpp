// The two faces of `hreduce bench`: the comparison run on this process's
// team (the default), and hreduce alone on a team over MPI processes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "args.hpp"
#include "hreduce/options.hpp"
#include "hreduce/team.hpp"

namespace hreduce::cli {

// Vector sizes per member: 8 B, ×step, ... up to max_bytes, and max_bytes
// itself when the steps miss it.
std::vector<std::size_t> bench_sizes(std::size_t max_bytes, std::size_t step);

// Both return the process's exit status: non-zero when a result was wrong.
int run_comparison(Team& team, const Args& args, const std::vector<std::size_t>& sizes,
                   double min_seconds);
int run_mpi_bench(Team& team, const std::vector<std::size_t>& sizes, double min_seconds);

}  // namespace hreduce::cli
