// The subcommands of the `hreduce` program.
#pragma once

#include <string>
#include <vector>

namespace hreduce::cli {

int topo_command(const std::vector<std::string>& argv);
int bench_command(const std::vector<std::string>& argv);
int probe_command(const std::vector<std::string>& argv);

}  // namespace hreduce::cli
