// InterProcessGroup, the engine's ProcessGroup (src/engine/process_group.hpp)
// for a team spanning several processes. What the team knows about them:
// how many members each contributes, which node each sits on, the channel
// between the processes (spoken by each one's member 0, its leader), and,
// where processes share a node, the node level (src/node/) with the channels
// of the node and of the nodes' first processes. It picks the inter-process
// algorithm for a call (pick, choose, explain: inter_process_group.cpp,
// through decide_between_processes in inter_decision.hpp); the engine runs
// each call through execute() (hybrid_execute.cpp), which hands it to a
// HybridCall (hybrid_call.hpp) and its regime.
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "src/engine/process_group.hpp"
#include "src/engine/process_step.hpp"
#include "src/hybrid/inter_decision.hpp"
#include "src/inter/inter.hpp"
#include "src/node/node_group.hpp"
#include "src/transport/channel.hpp"
#include "src/transport/sub_channel.hpp"
#include "src/transport/workspace.hpp"

namespace hreduce::detail {

struct ProcessLayout {
  int process = 0;           // this process's index among the processes
  std::vector<int> threads;  // members contributed by each process
  std::vector<int> node_of;  // node index of each process (0-based, ordered)

  int processes() const { return static_cast<int>(threads.size()); }
  int first_rank(int process) const;  // team rank of that process's member 0
  int total_members() const { return first_rank(processes()); }
  int process_of(int team_rank) const;
  int nodes() const;
  // True when every node's processes are consecutive ranks (virtual nodes
  // always are), so a node can reduce first without breaking rank order.
  bool nodes_contiguous() const;
};

// Per-team overrides of the inter-process phase.
struct InterOptions {
  CostModel cost;
  InterAlgorithm allreduce = InterAlgorithm::automatic;
  InterAlgorithm reduce_scatter = InterAlgorithm::automatic;
  // allreduce: reduce inside each node first, then between node leaders,
  // then broadcast inside nodes, when the nodes allow it.
  bool by_node = true;
  // allreduce of at least this many bytes per member is pipelined in chunks
  // of pipeline_chunk_bytes (0: never).
  std::size_t pipeline_min_bytes = std::size_t{1} << 20;
  std::size_t pipeline_chunk_bytes = std::size_t{256} << 10;
  // Processes of one node combine through a shared segment (src/node/)
  // instead of messages, when nodes are consecutive ranks and some node
  // holds more than one process.
  bool node_shared_memory = true;
  std::size_t node_chunk_bytes = kNodeChunkBytes;
  // A process that only contributes to a small node reduction may return
  // without waiting (TeamOptions::run_ahead; node_group.hpp).
  bool node_run_ahead = true;
  // How long a process waits for another of its node (zero: forever; a
  // process that dies is noticed regardless).
  std::chrono::milliseconds timeout{0};
  // Members of all the processes on this machine (virtual nodes included):
  // the node's waits yield early where they outnumber its CPUs.
  int host_members = 0;
  // Members of this machine's processes before this one (virtual nodes
  // included); -1: unknown, the processes before it on its node.
  int host_members_before = -1;
};

class InterProcessGroup : public ProcessGroup {
 public:
  // `channel` connects all processes (participant = process index); the
  // group owns it when `owned` is given.
  InterProcessGroup(Channel& channel, ProcessLayout layout, InterOptions options,
                    std::unique_ptr<Channel> owned = nullptr);

  int processes() const override { return layout_.processes(); }
  int members_here() const override { return layout_.threads[layout_.process]; }
  int first_rank() const override { return layout_.first_rank(layout_.process); }
  int total_members() const override { return layout_.total_members(); }
  int members_before_on_host() const override;
  void* allocate_shared(std::size_t bytes) override;
  void placed(const Topology& topology, const Placement& placement) override;
  void execute(MemberState& me, const Call& call) override;

  Channel& channel() { return *channel_; }
  const ProcessLayout& layout() const { return layout_; }
  const InterOptions& options() const { return options_; }

  // The node level, when it applies: the processes of this node, and (on a
  // node's first process only) the first processes of all nodes.
  bool two_level() const { return node_channel_ != nullptr; }
  Channel& node_channel() { return *node_channel_; }
  Channel* node_leaders_channel() { return leaders_channel_.get(); }

  // Which algorithm the leaders run for a call (no allocation), and why
  // (for people): both from decide_between_processes (inter_decision.hpp).
  InterAlgorithm pick(CollectiveKind kind, std::size_t bytes, bool commutative) const;
  Choice choose(CollectiveKind kind, std::size_t bytes, bool commutative) const;
  std::string explain(CollectiveKind kind, std::size_t bytes, bool commutative) const override;
  std::string route(CollectiveKind kind, std::size_t bytes) const override;
  bool left_fold_by_chain() const override;
  bool usable() const override;
  void resynchronize() override;

  // The node level (node_group.hpp), or null: then processes of one node
  // exchange messages like any others.
  NodeGroup* node() const { return node_.get(); }
  int node_index() const { return layout_.node_of[layout_.process]; }
  bool multi_node() const { return layout_.nodes() > 1; }
  // Some process contributes more than one member: only then has a
  // pipelined allreduce anything to overlap (HybridCall::pipelined).
  bool some_process_has_helpers() const { return some_process_has_helpers_; }
  // With the node level: the first processes of all nodes, on a node's
  // first process only.
  Channel* leaders_of_nodes() { return leaders_channel_.get(); }

  Workspace workspace;                      // leader only
  std::vector<std::size_t> process_counts;  // reduce_scatter, leader only

 private:
  // What describe()'s race between the single copy and the chunks found.
  void explain_race(std::ostream& text) const;
  void build_node_level();
  InterShape inter_shape() const;
  InterOverrides inter_overrides() const;

  Channel* channel_;
  std::unique_ptr<Channel> owned_;
  ProcessLayout layout_;
  InterOptions options_;
  bool some_process_has_helpers_ = false;
  std::unique_ptr<SubChannel> node_channel_;
  std::unique_ptr<SubChannel> leaders_channel_;
  std::unique_ptr<NodeGroup> node_;
  std::vector<int> node_processes_;  // with the node level: this node's
  // Where placed() found this process's member 0: its staging chunks and
  // its Team::allocate memory are bound to that NUMA node (-1: none). The
  // topology is the team's, which outlives this group.
  const Topology* topology_ = nullptr;
  int numa_ = -1;
};

}  // namespace hreduce::detail
