// hreduce: the command-line face of the runtime.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "hreduce/error.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/version.hpp"
#include "src/common/environment.hpp"

namespace {

using hreduce::cli::Command;

constexpr const char* kMachineOptions = R"(machine options:
  --synthetic STR    use an hwloc synthetic topology, e.g. "pack:2 numa:2 core:4 pu:2"
  --xml FILE         use an hwloc XML topology (from `lstopo FILE.xml`)
  --members T        team size (default: one per core)
  --placement P      compact (default) or scatter
  --levels LIST      grouping levels, outermost first, e.g. numa,l3,core
  --radix K          fan-in of the trees inside each group (default 2)
)";

constexpr const char* kByteUnits =
    R"(byte counts (B above) take K = 1000, Ki = 1024, M, Mi, G, Gi, optionally followed by B:
  --max-bytes 1Mi is 1048576 bytes, --max-bytes 1M is 1000000
)";

constexpr const char* kBenchOptions = R"(bench options:
  --max-bytes B      largest vector per member (default 64Mi); sizes go 8 B, ×step, ...
  --step K           size factor between rows (default 8)
  --sizes L          instead of --max-bytes/--step: these bytes per member, comma-
                     separated (e.g. 8,100,4096,1000000; rounded down to whole
                     elements, at least one)
  --min-time-ms T    timed samples per row, all implementations together (default 200)
  --implementations L  hreduce first, then any of openmp_reduction, openmp_sliced,
                     tbb, limit (default: all)
  --collectives L    any of reduce, allreduce, reduce_scatter_block, scan, exscan
  --types L          any of double, int32, double_int (MINLOC) on every collective
                     (default: double everywhere, plus int32 and double_int on allreduce)
  --json FILE        write every measured point as JSON
  --plot FILE.svg    plot GB/s against size, one panel per collective and type
  --breakdown        time hreduce's calls per level too: inside_process, node_segment,
                     between_nodes, waiting (µs per call, in the table, the JSON's
                     "levels" and stacked bars in --plot); with or without --mpi
  --settle-us U      idle time before each sample (default 10000): other runtimes'
                     threads stop spinning
  --reproducibility L  also run hreduce at each level L (shape_independent, exact;
                     comma-separated) with per-call options, in turn with the rest, and
                     give its time and its ratio to hreduce's run_to_run time per row;
                     exact only where the op is sum on double (else skipped, with a note)
  --mpi              hreduce against MPI_Reduce, MPI_Allreduce, ... on a team over
                     MPI_COMM_WORLD (run under mpirun), interleaved; --members then
                     counts threads per process (default 1); takes --collectives,
                     --json and --plot, not --types or --settle-us; --implementations
                     hreduce times hreduce alone (default hreduce,mpi)
  --node-chunk-bytes B  with --mpi: staging chunk per process of the shared segment
                     through which a node's processes combine (default 256Ki)
  --no-shared-memory with --mpi: a node's processes exchange MPI messages instead
                     of sharing a segment (for A/B runs)
  --zero-copy        with --mpi: hreduce's buffers come from Team::allocate, so a
                     node's processes read and write them where they are
  --no-run-ahead     TeamOptions::run_ahead = false: every call waits for every
                     member (and process), so every error lands in its own call
  --algorithm A      automatic (default), tree or sliced
  --tree S           hierarchical (default), binomial, knomial, binary, flat, chain
  --tree-max-bytes B largest vector automatic sends down the tree (default 4096)
  --tree-min-members N  teams of at least N members: automatic takes the tree (reduce,
                     allreduce up to --tree-max-bytes), never the mailbox (default 8)
  --chunk-bytes B    sliced algorithm's chunk (default 16Ki)
)";

constexpr const char* kTopoOptions = R"(topo options:
  --dot              print the reduction tree as Graphviz DOT
  --mpi              under mpirun: a team over MPI_COMM_WORLD (--members threads per
                     process, default 1); prints the node's processes, the PUs of
                     their members, and where the node segment's pages sit
  --node-chunk-bytes B, --no-shared-memory  with --mpi: as for bench
)";

constexpr const char* kProbeOptions = R"(probe options:
  --json FILE        write the machine description (schema hreduce-machine/2, docs/machine.md)
  --plot FILE.svg    latency and bandwidth matrices as heatmaps
  --quick            a few seconds instead of about a minute (smaller samples)
  --mpi              under mpirun: MPI point-to-point latency and bandwidth too
)";

// Every command: its name, its line in `hreduce help`, its own options,
// whether it also takes the machine options, and what runs it. A new
// command is one more row.
const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"bench",
       "compare hreduce with OpenMP, oneTBB and the memory-traffic limit on\n"
       "          this machine (every collective, checked against a sequential oracle);\n"
       "          with --mpi, compare it with MPI's own collectives over MPI processes",
       kBenchOptions, true, hreduce::cli::bench_command},
      {"topo", "print the machine, the members' placement and the reduction tree", kTopoOptions,
       true, hreduce::cli::topo_command},
      {"probe",
       "measure this machine (core-to-core, memory, fold, across processes,\n"
       "          MPI with --mpi) and write its description (docs/machine.md)",
       kProbeOptions, false, hreduce::cli::probe_command},
      hreduce::cli::kPredictCommand,
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const Command& c : commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Every environment variable hreduce reads (one table:
// src/common/environment.hpp).
void print_environment(std::ostream& out) {
  out << "\nenvironment (overrides the options in code):\n";
  for (const hreduce::detail::EnvironmentVariable& v : hreduce::detail::kEnvironment) {
    out << "  " << v.name << "\n      " << v.meaning << "\n      unset: " << v.fallback << "\n";
  }
}

void print_command_options(const Command& c, std::ostream& out) {
  out << '\n' << c.options;
  if (c.machine_options) out << '\n' << kMachineOptions;
}

// `hreduce help`: every command and all their options.
void print_usage(std::ostream& out) {
  out << "usage: hreduce <command> [options]\n"
         "       hreduce <command> --help    that command's options\n"
         "       hreduce --version\n\ncommands:\n";
  for (const Command& c : commands()) {
    // Names up to 7 characters line their summaries up in one column.
    const std::size_t pad = c.name.size() < 8 ? 8 - c.name.size() : 1;
    out << "  " << c.name << std::string(pad, ' ') << c.summary << '\n';
  }
  out << "  help    this text\n";
  for (const Command& c : commands()) out << '\n' << c.options;
  out << '\n' << kMachineOptions << '\n' << kByteUnits;
  print_environment(out);
}

// `hreduce <command> --help`: that command alone.
void print_command_usage(const Command& c, std::ostream& out) {
  out << "usage: hreduce " << c.name << " [options]\n\n  " << c.summary << '\n';
  print_command_options(c, out);
  out << '\n' << kByteUnits;
  print_environment(out);
}

bool asks_for_help(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 1 ? 2 : 1), argv + argc);
  const std::string name = argc > 1 ? argv[1] : "help";
  try {
    if (name == "help" || name == "--help" || name == "-h") {
      print_usage(std::cout);
      return 0;
    }
    if (name == "--version") {
      std::cout << hreduce::cli::version_text() << '\n';
      return 0;
    }
    const Command* command = find_command(name);
    if (command == nullptr) {
      std::cerr << "hreduce: unknown command '" << name << "'\n";
      print_usage(std::cerr);
      return 2;
    }
    if (asks_for_help(args)) {
      print_command_usage(*command, std::cout);
      return 0;
    }
    return command->run(args);
  } catch (const hreduce::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
