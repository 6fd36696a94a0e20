// `hreduce probe`: measures this machine and writes its description
// (docs/machine.md). Under mpirun with --mpi, rank 0 alone first runs the
// local measurements while the others sleep, so that they do not compete
// for its cores; then every process times MPI point to point.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "src/cli/args.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/mpi_session.hpp"
#include "src/probe/heatmap_svg.hpp"
#include "src/probe/machine_json.hpp"
#include "src/probe/mpi_point_to_point.hpp"
#include "src/probe/probe.hpp"

namespace hreduce::cli {
namespace {

namespace pr = detail::probe;

// Fails before a minute of measuring, not after.
void check_writable(const std::optional<std::string>& path) {
  if (!path) return;
  std::FILE* file = std::fopen(path->c_str(), "a");
  if (file == nullptr) {
    throw ArgumentError("hreduce probe: cannot write " + *path + ": " + std::strerror(errno));
  }
  std::fclose(file);
}

void print_matrix(const char* name, const pr::NumaMatrix& m) {
  std::printf("  %-6s", name);
  for (const auto& row : m) {
    for (double v : row) std::printf(" %7.1f", v * 1e-9);
    std::printf(" |");
  }
  std::printf("\n");
}

void print_summary(const pr::MachineDescription& m) {
  std::printf("hreduce probe: %s, %zu PU(s), %d core(s), %d NUMA node(s), %d package(s); %.1f s\n",
              m.host.c_str(), m.topology.pus.size(), m.topology.cores, m.topology.numa_nodes,
              m.topology.packages, m.probe_seconds);
  std::printf("cache-line round trip (%zu pair(s)%s):\n", m.core_to_core.pairs.size(),
              m.core_to_core.all_pairs ? ", every pair" : ", one per relation plus a sample");
  for (const pr::RelationSummary& s : m.core_to_core.by_relation) {
    std::printf("  %-16s %8.1f ns  (median of %d pair(s)); exchange %.1f ns\n",
                std::string(pr::to_string(s.relation)).c_str(), s.median_round_trip_seconds * 1e9,
                s.pairs, s.exchange_seconds * 1e9);
  }
  std::printf(
      "memory, GB/s, NUMA node of the threads -> of the memory (rows |), %.0f MiB/thread:\n",
      static_cast<double>(m.memory.bytes_per_thread) / (1 << 20));
  std::printf(" one thread\n");
  print_matrix("read", m.memory.one_thread.read);
  print_matrix("copy", m.memory.one_thread.copy);
  print_matrix("fold", m.memory.one_thread.fold);
  std::printf(" one thread per core of the node\n");
  print_matrix("read", m.memory.node_threads.read);
  print_matrix("copy", m.memory.node_threads.copy);
  print_matrix("fold", m.memory.node_threads.fold);
  std::printf("fold kernel (reduce_local, in cache), Gelem/s:\n");
  for (const pr::FoldSpeed& f : m.fold) {
    std::printf("  %-7s %-10s %6.2f\n", f.op_class.c_str(), f.type.c_str(),
                f.elements_per_second * 1e-9);
  }
  const pr::CrossProcess& c = m.cross_process;
  if (c.vm_readv_fixed_seconds) {
    std::printf("process_vm_readv: %.2f us + %.3f us per KiB\n", *c.vm_readv_fixed_seconds * 1e6,
                *c.vm_readv_seconds_per_kib * 1e6);
  } else {
    std::printf("process_vm_readv: unavailable (%s)\n", c.vm_readv_unavailable.c_str());
  }
  std::printf("futex wake-up across processes: median %.1f us, 90th percentile %.1f us\n",
              c.futex_wake_median_seconds * 1e6, c.futex_wake_p90_seconds * 1e6);
  if (!m.mpi) return;
  std::printf("MPI point to point, %d process(es) on %d %snode(s):\n", m.mpi->processes,
              m.mpi->nodes, m.mpi->virtual_nodes ? "virtual " : "");
  const std::pair<const char*, const std::optional<pr::MpiLink>*> links[] = {
      {"within a node", &m.mpi->intra_node}, {"between nodes", &m.mpi->inter_node}};
  for (const auto& [name, link] : links) {
    if (!*link) continue;
    std::printf("  %-14s latency %.2f us, bandwidth %.2f GB/s (median of %d pair(s))\n", name,
                (*link)->latency_seconds * 1e6, (*link)->bytes_per_second * 1e-9, (*link)->pairs);
  }
}

// Other ranks wait for rank 0's local measurements without spinning.
void sleep_until_all_arrive() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0; !done;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

pr::MachineDescription probe_locally(const Args& args) {
  const auto progress = [](const std::string& step) {
    std::fprintf(stderr, "hreduce probe: %s\n", step.c_str());
  };
  pr::ProbeSettings settings;
  settings.quick = args.has("--quick");
  return pr::probe_machine(Topology::discover(), settings, progress);
}

void write(const Args& args, const pr::MachineDescription& machine) {
  print_summary(machine);
  if (auto path = args.get("--json")) {
    pr::write_text_file(*path, pr::to_json(machine), "hreduce probe");
    std::printf("machine description: %s\n", path->c_str());
  }
  if (auto path = args.get("--plot")) {
    pr::write_text_file(*path, pr::heatmaps_svg(machine), "hreduce probe");
    std::printf("heatmaps: %s\n", path->c_str());
  }
}

}  // namespace

int probe_command(const std::vector<std::string>& argv) {
  const Args args("hreduce probe", argv, {"--quick", "--mpi"}, {"--json", "--plot"});
  check_writable(args.get("--json"));
  check_writable(args.get("--plot"));
  const MpiSession mpi(args.has("--mpi"));
  if (!mpi.active) {
    write(args, probe_locally(args));
    return 0;
  }
  // Local measurements first: after MPI's messages, rank 0's
  // process_vm_readv read 4-6 times slower here than in a fresh process.
  std::optional<pr::MachineDescription> machine;
  if (mpi.rank == 0) {
    try {
      machine = probe_locally(args);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);  // the others would wait for rank 0 for ever
    }
  }
  sleep_until_all_arrive();
  std::optional<pr::MpiPointToPoint> p2p = pr::mpi_point_to_point(
      MPI_COMM_WORLD, args.has("--quick"),
      [&](const std::string& s) { std::fprintf(stderr, "hreduce probe: %s\n", s.c_str()); });
  if (mpi.rank == 0) {
    machine->mpi = std::move(p2p);
    write(args, *machine);
  }
  sleep_until_all_arrive();
  return 0;
}

}  // namespace hreduce::cli
