#include "src/model/machines.hpp"

#include <array>
#include <fstream>
#include <sstream>

#include "hreduce/error.hpp"
#include "src/probe/machine_json.hpp"
#include "src/probe/pairs.hpp"
#include "src/probe/probe.hpp"

namespace hreduce::detail::model {
namespace {

// The figures of a built-in machine, approximate, from the public sources
// docs/model.md cites ("Built-in machines"). Rates as docs/machine.md
// counts them: read n, copy 2n, fold 3n bytes per n bytes of vector.
struct Figures {
  std::uint64_t l1, l2, l3;
  std::array<double, probe::kRelationCount> one_way;   // seconds; 0: the machine has no such pair
  double node_read, node_copy, node_fold;              // every core of a NUMA node, local memory
  double thread_read, thread_copy, thread_fold;        // one core, local memory
  double same_package_factor, across_packages_factor;  // remote memory's share of local
  double fold_double_per_second, fold_int32_per_second, fold_minloc_per_second;  // elements
  double vm_readv_fixed, vm_readv_per_kib, futex_wake;
  double mpi_intra_latency, mpi_intra_rate, mpi_inter_latency, mpi_inter_rate;
};

// 2 × AMD EPYC 7763 (Zen 3), NPS4: 4 NUMA nodes per socket of 16 cores,
// an L3 per 8 cores; HDR InfiniBand between nodes.
constexpr Figures k2x64{32 << 10, 512 << 10, 32 << 20, {0, 0, 25e-9, 110e-9, 120e-9, 200e-9},
                        40e9,     38e9,      39e9,     22e9,
                        20e9,     22e9,      0.85,     0.55,
                        6e9,      12e9,      0.8e9,    1.5e-6,
                        0.1e-6,   5e-6,      0.3e-6,   12e9,
                        1.0e-6,   24e9};

// 1 × AMD EPYC 9965 (Zen 5c), NPS1: one NUMA node, an L3 per 16 cores;
// NDR InfiniBand between nodes.
constexpr Figures k1x192{48 << 10, 1 << 20, 32 << 20, {0, 0, 30e-9, 140e-9, 140e-9, 0},
                         450e9,    420e9,   430e9,    30e9,
                         28e9,     30e9,    1.0,      1.0,
                         8e9,      16e9,    1.0e9,    1.5e-6,
                         0.08e-6,  5e-6,    0.3e-6,   15e9,
                         1.0e-6,   48e9};

probe::NumaMatrix numa_matrix(const probe::MachineTopology& t, double local, const Figures& f) {
  const int n = std::max(1, t.numa_nodes);
  const int per_package = std::max(1, n / std::max(1, t.packages));
  probe::NumaMatrix m(static_cast<std::size_t>(n),
                      std::vector<double>(static_cast<std::size_t>(n)));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double factor = i == j                               ? 1.0
                            : i / per_package == j / per_package ? f.same_package_factor
                                                                 : f.across_packages_factor;
      m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = local * factor;
    }
  }
  return m;
}

probe::MachineDescription describe_builtin(const BuiltinMachine& b, const Figures& f) {
  probe::MachineDescription d;
  d.host = std::string("built-in ") + b.name;
  d.topology = probe::describe(Topology::synthetic(b.synthetic));
  d.topology.l1_bytes = f.l1, d.topology.l2_bytes = f.l2, d.topology.l3_bytes = f.l3;
  for (int r = 0; r < probe::kRelationCount; ++r) {
    if (f.one_way[static_cast<std::size_t>(r)] > 0) {
      d.core_to_core.by_relation.push_back(
          {static_cast<probe::Relation>(r), 0, 2 * f.one_way[static_cast<std::size_t>(r)]});
    }
  }
  d.memory.node_threads = {numa_matrix(d.topology, f.node_read, f),
                           numa_matrix(d.topology, f.node_copy, f),
                           numa_matrix(d.topology, f.node_fold, f)};
  d.memory.one_thread = {numa_matrix(d.topology, f.thread_read, f),
                         numa_matrix(d.topology, f.thread_copy, f),
                         numa_matrix(d.topology, f.thread_fold, f)};
  d.fold = {{"sum", "double", 8, f.fold_double_per_second, 24 * f.fold_double_per_second},
            {"sum", "int32", 4, f.fold_int32_per_second, 12 * f.fold_int32_per_second},
            {"minloc", "double_int", 16, f.fold_minloc_per_second, 48 * f.fold_minloc_per_second}};
  d.cross_process.vm_readv_fixed_seconds = f.vm_readv_fixed;
  d.cross_process.vm_readv_seconds_per_kib = f.vm_readv_per_kib;
  d.cross_process.futex_wake_median_seconds = d.cross_process.futex_wake_p90_seconds = f.futex_wake;
  probe::MpiPointToPoint mpi;
  mpi.intra_node = probe::MpiLink{0, f.mpi_intra_latency, f.mpi_intra_rate, {}, 0, {}};
  mpi.inter_node = probe::MpiLink{0, f.mpi_inter_latency, f.mpi_inter_rate, {}, 0, {}};
  d.mpi = mpi;
  return d;
}

std::string names_known() {
  std::string text = "this";
  for (const BuiltinMachine& b : builtin_machines()) text += std::string(", ") + b.name;
  return text;
}

}  // namespace

const std::vector<BuiltinMachine>& builtin_machines() {
  static const std::vector<BuiltinMachine> machines = {
      {"2x64", "pack:2 numa:4 l3:2 core:8 pu:1",
       "2 sockets x 64 cores (AMD EPYC 7763 class, NPS4: 8 NUMA nodes), HDR InfiniBand"},
      {"1x192", "pack:1 numa:1 l3:12 core:16 pu:1",
       "1 socket x 192 cores (AMD EPYC 9965 class, NPS1), NDR InfiniBand"},
  };
  return machines;
}

probe::MachineDescription builtin_machine(const std::string& name) {
  if (name == "2x64") return describe_builtin(builtin_machines()[0], k2x64);
  if (name == "1x192") return describe_builtin(builtin_machines()[1], k1x192);
  throw ArgumentError("predict: unknown machine '" + name + "' (known: " + names_known() +
                      ", or a file written by `hreduce probe --json`)");
}

probe::MachineDescription load_machine(const std::string& name_or_file,
                                       const std::function<void(const std::string&)>& progress) {
  if (name_or_file == "this") {
    probe::ProbeSettings settings;
    settings.quick = true;
    return probe::probe_machine(Topology::discover(), settings, progress);
  }
  for (const BuiltinMachine& b : builtin_machines()) {
    if (name_or_file == b.name) return builtin_machine(name_or_file);
  }
  std::ifstream in(name_or_file);
  if (!in) {
    throw ArgumentError("predict: --machine '" + name_or_file + "' is neither a machine name (" +
                        names_known() + ") nor a readable file");
  }
  std::stringstream text;
  text << in.rdbuf();
  return probe::machine_from_json(text.str());
}

Topology topology_of(const probe::MachineTopology& t) {
  std::vector<Pu> pus;
  for (std::size_t i = 0; i < t.pus.size(); ++i) {
    const probe::PuPlace& p = t.pus[i];
    Pu pu;
    pu.logical_index = static_cast<int>(i);
    pu.os_index = p.os_index;
    pu.container[static_cast<int>(Level::machine)] = 0;
    pu.container[static_cast<int>(Level::package)] = p.package;
    pu.container[static_cast<int>(Level::numa)] = p.numa;
    pu.container[static_cast<int>(Level::l3)] = p.l3;
    pu.container[static_cast<int>(Level::l2)] = p.l2;
    pu.container[static_cast<int>(Level::l1)] = p.core;
    pu.container[static_cast<int>(Level::core)] = p.core;
    pu.container[static_cast<int>(Level::pu)] = static_cast<int>(i);
    pus.push_back(pu);
  }
  std::vector<int> numa_os(static_cast<std::size_t>(std::max(0, t.numa_nodes)));
  for (std::size_t i = 0; i < numa_os.size(); ++i) numa_os[i] = static_cast<int>(i);
  return Topology("description: " + t.source, false, std::move(pus), std::move(numa_os),
                  {0, 0, 0, t.l3_bytes, t.l2_bytes, t.l1_bytes, 0, 0});
}

}  // namespace hreduce::detail::model
