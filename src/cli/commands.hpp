// The subcommands of the `hreduce` program.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hreduce::cli {

int topo_command(const std::vector<std::string>& argv);
int bench_command(const std::vector<std::string>& argv);
int probe_command(const std::vector<std::string>& argv);

// One row of main.cpp's command table: `hreduce <name> [options]`.
struct Command {
  std::string_view name;
  std::string_view summary;  // its line(s) in `hreduce help`
  std::string_view options;  // its options, as `hreduce <name> --help` prints them
  bool machine_options;      // it also takes the machine options (--synthetic, --members, ...)
  int (*run)(const std::vector<std::string>& argv);
};
extern const Command kPredictCommand;  // predict_command.cpp

}  // namespace hreduce::cli
