// hreduce: the command-line face of the runtime.
#include <iostream>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/cli/commands.hpp"
#include "src/common/environment.hpp"

namespace {

constexpr const char* kUsage = R"(usage: hreduce <command> [options]

commands:
  bench   compare hreduce with OpenMP, oneTBB and the memory-traffic limit on
          this machine (every collective, checked against a sequential oracle);
          with --mpi, compare it with MPI's own collectives over MPI processes
  topo    print the machine, the members' placement and the reduction tree
  probe   measure this machine (core-to-core, memory, fold, across processes,
          MPI with --mpi) and write its description (docs/machine.md)
  help    this text

machine options (bench, topo):
  --synthetic STR    use an hwloc synthetic topology, e.g. "pack:2 numa:2 core:4 pu:2"
  --xml FILE         use an hwloc XML topology (from `lstopo FILE.xml`)
  --members T        team size (default: one per core)
  --placement P      compact (default) or scatter
  --levels LIST      grouping levels, outermost first, e.g. numa,l3,core
  --radix K          fan-in of the trees inside each group (default 2)
bench options:
  --max-bytes B      largest vector per member (default 64 MiB); sizes go 8 B, ×step, ...
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
  --settle-us U      idle time before each sample (default 10000): other runtimes'
                     threads stop spinning
  --reproducibility L  also run hreduce at each level L (shape_independent, exact;
                     comma-separated) with per-call options, in turn with the rest, and
                     give its time and its ratio to hreduce's run_to_run time per row;
                     exact only where the op is sum on double (else skipped, with a note)
  --mpi              hreduce against MPI_Reduce, MPI_Allreduce, ... on a team over
                     MPI_COMM_WORLD (run under mpirun), interleaved; --members then
                     counts threads per process (default 1); takes --collectives,
                     --json and --plot, not --implementations, --types or --settle-us
  --node-chunk-bytes B  with --mpi: staging chunk per process of the shared segment
                     through which a node's processes combine (default 262144)
  --no-shared-memory with --mpi: a node's processes exchange MPI messages instead
                     of sharing a segment (for A/B runs)
  --zero-copy        with --mpi: hreduce's buffers come from Team::allocate, so a
                     node's processes read and write them where they are
  --no-run-ahead     TeamOptions::run_ahead = false: every call waits for every
                     member (and process), so every error lands in its own call
  --algorithm A      automatic (default), tree or sliced
  --tree S           hierarchical (default), binomial, knomial, binary, flat, chain
  --tree-max-bytes B largest vector automatic sends down the tree (default 4096)
  --chunk-bytes B    sliced algorithm's chunk (default 16384)
topo options:
  --dot              print the reduction tree as Graphviz DOT
probe options:
  --json FILE        write the machine description (schema hreduce-machine/1)
  --plot FILE.svg    latency and bandwidth matrices as heatmaps
  --quick            a few seconds instead of about a minute (smaller samples)
  --mpi              under mpirun: MPI point-to-point latency and bandwidth too
  --mpi              under mpirun: a team over MPI_COMM_WORLD (--members threads per
                     process, default 1); prints the node's processes, the PUs of
                     their members, and where the node segment's pages sit
)";

}  // namespace

// The usage, then every environment variable hreduce reads (one table:
// src/common/environment.hpp).
void print_usage(std::ostream& out) {
  out << kUsage << "\nenvironment (overrides the options in code):\n";
  for (const hreduce::detail::EnvironmentVariable& v : hreduce::detail::kEnvironment) {
    out << "  " << v.name << "\n      " << v.meaning << "\n      unset: " << v.fallback << "\n";
  }
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 1 ? 2 : 1), argv + argc);
  const std::string command = argc > 1 ? argv[1] : "help";
  try {
    // `hreduce bench --help` and `hreduce topo --help`: the one usage text
    // has every command's options.
    for (const std::string& arg : args) {
      if ((command == "bench" || command == "topo" || command == "probe") &&
          (arg == "--help" || arg == "-h")) {
        print_usage(std::cout);
        return 0;
      }
    }
    if (command == "topo") return hreduce::cli::topo_command(args);
    if (command == "bench") return hreduce::cli::bench_command(args);
    if (command == "probe") return hreduce::cli::probe_command(args);
    if (command == "help" || command == "--help" || command == "-h") {
      print_usage(std::cout);
      return 0;
    }
    std::cerr << "hreduce: unknown command '" << command << "'\n";
    print_usage(std::cerr);
    return 2;
  } catch (const hreduce::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
