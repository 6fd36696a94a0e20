// One call on one node, as tasks of the fluid simulation: every member of
// the node, with the runtime's own choices at each level. The nodes of a
// layout are alike, so one node stands for all; the phase between nodes is
// the node leader's message steps, priced by message_steps.hpp.
//
//   member tasks    up (inside_process) ─► node level (node_segment)
//                   ─► between nodes (leader) ─► node level down
//                   ─► down (inside_process)
//   synchronisations (waiting): a line every member of a group touches,
//   one access at a time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hreduce/team.hpp"  // CollectiveKind
#include "src/model/fluid_simulation.hpp"
#include "src/model/prediction.hpp"

namespace hreduce::detail::model {

// Who waits on a group's announcements: everyone (allreduce,
// reduce_scatter), or only the root (reduce) and each member on its lower
// ranks (scans): then the first member's store is seen by no one waiting
// on it, and a steady stream of calls pays one line transfer fewer.
enum class Waiters { all, last };
inline Waiters waiters_of(CollectiveKind kind) {
  return kind == CollectiveKind::reduce || kind == CollectiveKind::scan ||
                 kind == CollectiveKind::exscan
             ? Waiters::last
             : Waiters::all;
}

class NodeCall {
 public:
  NodeCall(const MachinePrices& prices, const Topology& node, const Layout& layout,
           const CallCase& call, const ModelSettings& settings);
  Prediction run();

 private:
  // Building blocks (node_call.cpp).
  int member_pu(int member) const { return pus_[static_cast<std::size_t>(member)]; }
  int leader(int process) const { return process * layout_.threads; }
  // Processes of a node combine through its segment (else by messages alone).
  bool by_node_level() const { return layout_.processes > 1 && settings_.node_shared_memory; }
  void then(int member, int task) { last_[static_cast<std::size_t>(member)] = task; }
  std::vector<int> after_of(int member) const;
  // Every member in `members` touches one line in turn; each continues when
  // all have (with Waiters::last, k members take k-1 transfers).
  void synchronise(const std::vector<int>& members, Level level, const std::string& what,
                   Waiters waiters = Waiters::all);
  double slowest_one_way(const std::vector<int>& members) const;
  // The engine's arrival and done barriers: each member publishes its own
  // line and the waiters read every other's, several in flight at once.
  void meet_on_own_lines(const std::vector<int>& members, const std::string& what,
                         Waiters waiters = Waiters::all);
  // Vector bytes per second a member streams at when the call's buffers
  // stay in its caches (0: they do not, memory bandwidth prices it).
  double cached_stream_rate(Stream kind) const;
  // `member` streams `bytes` of vector (read, copy or fold) from memory on
  // NUMA node `data_numa`, or from caches when the call's data fit there.
  void stream(int member, double bytes, Stream kind, int data_numa, Level level,
              const std::string& term);
  // `member` reads `count` announcements of `bytes` that other members
  // wrote this call: their lines come from the writers' caches.
  void take_lines(int member, double count, double bytes, Level level);
  // Reading `bytes` of the node segment that other cores wrote this call.
  void pull_lines(int member, double bytes, const char* what);
  // Both above: `member` waits `seconds` for those lines.
  void wait_for_lines(int member, double seconds, Level level, std::string term);
  void stream_spread(int member, const std::map<int, double>& bytes_on_numa, Stream kind,
                     Level level, const std::string& term);

  // Inside a process (node_call.cpp).
  void whole_call_in_one_process();
  void local_up(int process);
  void local_down(int process);
  void tree_up(int process);
  void sliced_pass(int process, bool every_output);
  // The node level and between nodes (node_levels.cpp).
  void node_level_up();
  // The way two processes' runtime settles on by measure, from `by_size`.
  NodeWay measured_way(NodeWay by_size) const;
  void node_inline(const std::vector<int>& leaders);
  void node_single_copy(const std::vector<int>& leaders);
  void node_chunks(const std::vector<int>& leaders);
  void between_nodes();
  void node_level_down();

  const MachinePrices& prices_;
  const Topology& node_;
  Layout layout_;
  CallCase call_;
  ModelSettings settings_;
  CollectiveKind kind_ = CollectiveKind::allreduce;
  double m_ = 0;            // bytes per member
  bool cached_ = false;     // the call's working set fits the caches
  double working_set_ = 0;  // bytes the node's members touch call after call
  bool oversubscribed_ = false;
  std::vector<int> pus_;     // PU of each member of the node
  std::vector<int> last_;    // each member's latest task (-1: none)
  std::vector<int> memory_;  // resource: each NUMA node's bandwidth (fraction of it)
  FluidSimulation sim_;
  std::string decisions_;
  std::optional<NodeWay> measured_from_;  // Prediction::measured_from
};

}  // namespace hreduce::detail::model
