// `hreduce predict`'s questions and answers: a layout of the team on a
// described machine, one call, and its predicted time split by level —
// for hreduce (replaying the runtime's own decisions) and for the flat-MPI
// algorithms on the same machine.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hreduce/options.hpp"
#include "hreduce/topology.hpp"
#include "src/inter/inter.hpp"  // InterAlgorithm
#include "src/model/fluid_simulation.hpp"
#include "src/model/machine_prices.hpp"
#include "src/node/node_way.hpp"  // NodeWay

namespace hreduce::detail::model {

// NODESxPROCSxTHREADS: nodes, processes per node, threads per process.
struct Layout {
  int nodes = 1, processes = 1, threads = 1;
  long long members() const { return 1LL * nodes * processes * threads; }
};
// "1024x8x16" -> {1024, 8, 16}; throws ArgumentError naming the text.
Layout parse_layout(const std::string& text);
std::string to_string(const Layout& layout);

struct CallCase {
  std::string collective = "allreduce";  // reduce, allreduce, reduce_scatter_block, scan, exscan
  std::size_t bytes_per_member = 8;      // each member's input
  std::string type = "double";           // double, int32, double_int
};

struct ModelSettings {
  PlacementPolicy placement = PlacementPolicy::compact;
  bool node_shared_memory = true;  // processes of a node combine through the segment
  bool single_copy = true;         // and may use process_vm_readv (if the machine allows)
  // ... only where it wins the runtime's race against the chunks at the
  // team's build (HREDUCE_NODE_SINGLE_COPY=auto; false: `on`, the default).
  bool single_copy_race = false;
  bool zero_copy = false;  // buffers from Team::allocate: no staging, no drain
  // The node level's way, where two processes' runtime picks it by what
  // each way took lately: set, the model prices that way alone (each of
  // the two, to pick as the runtime would); unset, it picks.
  std::optional<NodeWay> measured_node_way;
  // The inter-process algorithm a program may force (automatic: the runtime's cost model).
  InterAlgorithm inter_allreduce = InterAlgorithm::automatic;
  InterAlgorithm inter_reduce_scatter = InterAlgorithm::automatic;
  CollectiveOptions options;  // the runtime's defaults
};

struct Prediction {
  double seconds = 0;
  double levels[kLevelCount] = {};
  std::string dominant;   // the term that took most of the critical path
  std::string decisions;  // the runtime's choices, in words
  // Where two processes' node level goes by measure (measures_way): the
  // size's way, which the measure compares with the other.
  std::optional<NodeWay> measured_from;
};

struct FlatPrediction {
  std::string algorithm;
  std::optional<double> seconds;  // nullopt: the algorithm does not serve the collective
  std::string dominant;
};

Prediction predict_hreduce(const MachinePrices& prices, const Topology& node, const Layout& layout,
                           const CallCase& call, const ModelSettings& settings);

// Every rank an MPI process (nodes × processes × threads of them, R per
// node), each flat algorithm.
std::vector<FlatPrediction> predict_flat_mpi(const MachinePrices& prices, const Layout& layout,
                                             const CallCase& call);

// Element bytes and the fold's op class for a bench type name.
std::size_t element_bytes(const std::string& type);
std::string op_class_of(const std::string& type);

}  // namespace hreduce::detail::model
