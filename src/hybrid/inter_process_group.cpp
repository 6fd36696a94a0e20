#include "src/hybrid/inter_process_group.hpp"

#include <algorithm>
#include <sstream>
#include <thread>

#include "hreduce/error.hpp"
#include "hreduce/topology.hpp"
#include "src/common/failure.hpp"
#include "src/engine/numa_placement.hpp"
#include "src/node/node_way.hpp"
#include "src/topology/numa_memory.hpp"

namespace hreduce::detail {

int ProcessLayout::first_rank(int process) const {
  int rank = 0;
  for (int p = 0; p < process; ++p) rank += threads[p];
  return rank;
}

int ProcessLayout::process_of(int team_rank) const {
  int first = 0;
  for (int p = 0; p < processes(); ++p) {
    if (team_rank < first + threads[p]) return p;
    first += threads[p];
  }
  return processes() - 1;
}

int ProcessLayout::nodes() const {
  return node_of.empty() ? 1 : *std::max_element(node_of.begin(), node_of.end()) + 1;
}

bool ProcessLayout::nodes_contiguous() const {
  for (int p = 1; p < processes(); ++p) {
    if (node_of[p] != node_of[p - 1] && node_of[p] != node_of[p - 1] + 1) return false;
    if (node_of[p] < node_of[p - 1]) return false;
  }
  return true;
}

int InterProcessGroup::members_before_on_host() const {
  if (options_.host_members_before >= 0) return options_.host_members_before;
  int before = 0;
  for (int p = layout_.process - 1; p >= 0 && layout_.node_of[p] == node_index(); --p) {
    before += layout_.threads[p];
  }
  return before;
}

InterProcessGroup::InterProcessGroup(Channel& channel, ProcessLayout layout, InterOptions options,
                                     std::unique_ptr<Channel> owned)
    : channel_(&channel), owned_(std::move(owned)), layout_(std::move(layout)), options_(options) {
  const int P = layout_.processes();
  if (channel_->size() != P || channel_->rank() != layout_.process) {
    throw ArgumentError("InterProcessGroup: the channel has " + std::to_string(channel_->size()) +
                        " participants (this one " + std::to_string(channel_->rank()) +
                        ") but the layout " + std::to_string(P) + " processes (this one " +
                        std::to_string(layout_.process) + ")");
  }
  if (static_cast<int>(layout_.node_of.size()) != P) layout_.node_of.assign(P, 0);
  some_process_has_helpers_ =
      std::any_of(layout_.threads.begin(), layout_.threads.end(), [](int t) { return t > 1; });
  const int nodes = layout_.nodes();
  if (options_.node_shared_memory && nodes < P && layout_.nodes_contiguous()) {
    build_node_level();
    return;
  }
  if (options_.by_node && nodes > 1 && nodes < P && layout_.nodes_contiguous()) {
    std::vector<int> mine, leaders;
    for (int p = 0; p < P; ++p) {
      if (layout_.node_of[p] == layout_.node_of[layout_.process]) mine.push_back(p);
      if (p == 0 || layout_.node_of[p] != layout_.node_of[p - 1]) leaders.push_back(p);
    }
    node_channel_ = std::make_unique<SubChannel>(*channel_, mine);
    if (mine.front() == layout_.process) {
      leaders_channel_ = std::make_unique<SubChannel>(*channel_, leaders);
    }
  }
}

namespace {

// The node's CPUs: a process bound to one core (mpirun --bind-to core)
// sees only its own in its affinity mask, so that mask cannot tell whether
// the node's members outnumber the node's CPUs.
int node_cpus() { return static_cast<int>(std::thread::hardware_concurrency()); }

}  // namespace

void InterProcessGroup::build_node_level() {
  const int P = layout_.processes();
  std::vector<int> mine, leaders;
  int members_on_node = 0;
  for (int p = 0; p < P; ++p) {
    if (layout_.node_of[p] == node_index()) {
      mine.push_back(p);
      members_on_node += layout_.threads[p];
    }
    if (p == 0 || layout_.node_of[p] != layout_.node_of[p - 1]) leaders.push_back(p);
  }
  node_processes_ = mine;
  SubChannel node_channel(*channel_, mine);
  const int size = static_cast<int>(mine.size());
  const std::size_t bytes = NodeGroup::segment_bytes(size, options_.node_chunk_bytes);
  SharedSegment segment =
      size > 1 ? SharedSegment::for_node(node_channel, bytes) : SharedSegment::anonymous(bytes);
  node_ = std::make_unique<NodeGroup>(
      std::move(segment), node_channel.rank(), size, mine.front(), options_.node_chunk_bytes,
      options_.timeout, std::max(members_on_node, options_.host_members) > node_cpus(),
      options_.node_run_ahead);
  if (multi_node() && mine.front() == layout_.process) {
    leaders_channel_ = std::make_unique<SubChannel>(*channel_, leaders);
  }
}

namespace {

// "0-3,8" style is for machines; a short comma list reads well enough here.
std::string pu_list(const std::vector<int>& pus) {
  std::string text;
  for (std::size_t i = 0; i < pus.size(); ++i) {
    text += (i ? "," : "") + std::to_string(pus[i]);
  }
  return text;
}

}  // namespace

bool InterProcessGroup::usable() const { return node_ == nullptr || node_->intact(); }

void InterProcessGroup::resynchronize() {
  if (processes() == 1) return;
  if (multi_node() || node_ == nullptr) {
    // Messages of the failed call may still be on their way between
    // processes: nothing local can tell which.
    throw UnusableTeamError(
        "Team::resynchronize: this team's processes exchange messages (" +
        std::string(multi_node() ? "several nodes" : "no shared memory between them") +
        "), so it cannot be resynchronised; build a new team");
  }
  // Twice over the node's processes: all have left their calls before any
  // restarts, and all have restarted before any calls again. A process
  // that is gone fails the exchange (within the team's timeout).
  auto everyone_here = [&] {
    int here = 1;
    static const auto op = erase_op<int>(hreduce::op::sum);
    inter::recursive_doubling_allreduce(*channel_, &here, 1, op, workspace);
  };
  everyone_here();
  node_->restart();
  everyone_here();
}

void InterProcessGroup::placed(const Topology& topology, const Placement& placement) {
  if (!node_) return;
  const std::string mine = std::to_string(placement.members()) + " member(s) on PU " +
                           pu_list(placement.pu_of_member) + " (process bound to PU " +
                           pu_list(process_pus(topology)) + ")";
  // Before any process touches them (the first operation comes after
  // describe()), so every page lands where it is asked for.
  std::string staging;
  topology_ = &topology;
  numa_ = staging_numa(plan_numa(topology, placement));
  if (numa_ >= 0) {
    const bool bound = bind_pages(topology, node_->own_staging(), node_->staging_bytes(), numa_);
    staging =
        "asked for NUMA node " + std::to_string(numa_) + (bound ? ", bound" : ", first touch");
  }
  const Failure failure = node_->describe(mine, staging);
  if (failure) throw_error(ErrorKind::transport, "Team: " + failure.text);
}

void* InterProcessGroup::allocate_shared(std::size_t bytes) {
  if (!node_) return nullptr;
  SubChannel node_channel(*channel_, node_processes_);
  void* memory = node_->allocate(node_channel, bytes);
  // This process writes it (its inputs, the drains of its outputs) and the
  // node's folders read it, as its staging chunks: on its member 0's node.
  // Allocations are whole pages (node_allocations.cpp).
  if (topology_ != nullptr) {
    bind_pages(*topology_, memory, std::max<std::size_t>(4096, (bytes + 4095) / 4096 * 4096),
               numa_);
  }
  return memory;
}

InterShape InterProcessGroup::inter_shape() const {
  return {layout_.processes(), layout_.nodes(), node_ != nullptr, two_level()};
}

InterOverrides InterProcessGroup::inter_overrides() const {
  return {options_.cost, options_.allreduce, options_.reduce_scatter};
}

InterAlgorithm InterProcessGroup::pick(CollectiveKind kind, std::size_t bytes,
                                       bool commutative) const {
  return decide_between_processes(kind, bytes, commutative, inter_shape(), inter_overrides())
      .algorithm;
}

Choice InterProcessGroup::choose(CollectiveKind kind, std::size_t bytes, bool commutative) const {
  return explain_between_processes(kind, bytes, commutative, inter_shape(), inter_overrides());
}

std::string InterProcessGroup::route(CollectiveKind kind, std::size_t bytes) const {
  // `bytes`: each member's input (a reduce_scatter's whole vector), what
  // the node level and the messages carry.
  const InterDecision between =
      decide_between_processes(kind, bytes, true, inter_shape(), inter_overrides());
  std::string text;
  // A pipelined allreduce hands the node level one chunk at a time.
  std::size_t node_bytes = bytes;
  if (kind == CollectiveKind::allreduce &&
      pipelines_allreduce(bytes, options_.pipeline_min_bytes, options_.pipeline_chunk_bytes,
                          some_process_has_helpers_)) {
    text = "pipelined, ";
    node_bytes = std::min(bytes, options_.pipeline_chunk_bytes);
  }
  if (node_) {
    // A scan across nodes: the node's first process wants the node's total
    // and its prefix both (node_level.cpp's node_level_scan).
    const bool scan = kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
    const NodeWay way = node_way(kind, node_bytes, 1, false, node_->shape(), scan && multi_node());
    // Where the node level picks its way by what each took lately: the
    // way it would take now.
    if (const auto measured = node_->measured_way(kind, node_bytes, way)) {
      text += std::string(to_string(*measured)) + " (measured)";
    } else {
      text += std::string(to_string(way));
    }
    if (between.participants > 1) text += " + ";
  }
  if (between.participants > 1) {
    const bool over_nodes = node_ != nullptr || (two_level() && kind == CollectiveKind::allreduce);
    text += std::string(to_string(between.algorithm)) + " over " +
            std::to_string(between.participants) + (over_nodes ? " nodes" : " processes");
  }
  return text;
}

// The node level folds the processes' partials in rank order (staged
// chunks, node_group.hpp). When every process but the first holds one
// member, those partials are the left fold's own terms, so the usual steps
// give its bits without the chain; several nodes combine by algorithms that
// bracket otherwise.
bool InterProcessGroup::left_fold_by_chain() const {
  if (node_ == nullptr || multi_node()) return true;
  for (int k = 1; k < layout_.processes(); ++k) {
    if (layout_.threads[k] != 1) return true;
  }
  return false;
}

void InterProcessGroup::explain_race(std::ostream& text) const {
  bool first = true, lost = false;
  for (CollectiveKind kind : kNodeRacedKinds) {
    const std::optional<RaceTimes> race = node_->single_copy_race(kind);
    if (!race) continue;
    text << (first ? "; at the team's build it raced the chunks, one call of each kind of " : ",")
         << (first ? std::to_string(kNodeRaceBytes) + " bytes per process (best of " +
                         std::to_string(kNodeRaceRounds) +
                         ", us summed over the processes, single copy against chunks):"
                   : "")
         << " " << to_string(kind) << " " << race->single_copy_seconds * 1e6 << " against "
         << race->chunks_seconds * 1e6;
    first = false;
    lost = lost || !node_->single_copy(kind);
  }
  if (first) return;
  std::string served;
  for (CollectiveKind kind : kNodeRacedKinds) {
    if (node_->single_copy(kind)) served += " " + std::string(to_string(kind));
  }
  text << (served.empty()
               ? "; so the chunks serve every kind"
               : "; so the single copy serves" + served + (lost ? ", the chunks the others" : ""));
  if (lost) text << " (HREDUCE_NODE_SINGLE_COPY unset or on: the single copy, no race)";
}

std::string InterProcessGroup::explain(CollectiveKind kind, std::size_t bytes,
                                       bool commutative) const {
  std::ostringstream text;
  const Choice choice = choose(kind, bytes, commutative);
  text << to_string(kind) << " of " << bytes << " bytes per member over " << layout_.processes()
       << " processes on " << layout_.nodes() << " node(s)";
  if (node_) {
    text << ": the processes of each node combine through a shared segment of "
         << node_->segment_size() << " bytes (chunks of " << node_->chunk_bytes()
         << " bytes, inputs up to " << node_->inline_bytes() << " bytes inline";
    if (node_->inline_bytes(CollectiveKind::reduce) != node_->inline_bytes()) {
      text << ", a reduce's, scan's and exscan's up to "
           << node_->inline_bytes(CollectiveKind::reduce);
    }
    text << "), process k of the node "
         << "folding slice k of every chunk in rank order";
    if (node_->single_copy()) {
      text << "; with 2 processes on the node, calls from "
           << std::max(kNodeSingleCopyBytes, node_->inline_bytes() + 1)
           << " bytes per process (a reduce's, scan's and exscan's from "
           << std::max(kNodeSingleCopyBytes, node_->inline_bytes(CollectiveKind::reduce) + 1)
           << ") read and write the other process's memory in one copy "
              "(process_vm_readv/writev) instead (a reduce or scan from "
           << kNodeSplitFoldBytes
           << " bytes with both processes folding; a reduce_scatter unless an output lies over "
              "the input the other reads); above 8 KiB a call takes that or the inline way or "
              "the chunks (by size), whichever cost less lately";
      explain_race(text);
    } else if (node_->size() > 1) {
      text << "; no single-copy access between processes (HREDUCE_NODE_SINGLE_COPY=off, or the "
              "kernel refused it)";
    }
    if (node_->size() > 1) {
      text << (node_->light_publish()
                   ? "; progress words published without a fence (waiters about to sleep "
                     "order them with membarrier)"
                   : "; every progress word published with a fence "
                     "(HREDUCE_NODE_ASYMMETRIC_FENCE=off, or no membarrier)");
    }
    text << "; this node's processes (logical PU indices):";
    for (int q = 0; q < node_->size(); ++q) {
      text << (q ? ";" : "") << " process " << node_processes_[q] << " (pid " << node_->pid(q)
           << ") " << node_->description(q) << ", staging pages: "
           << memory_location(node_->staging(q), node_->buffer_count() * node_->chunk_bytes());
      const std::string asked = node_->staging_request(q);
      if (!asked.empty()) text << " (" << asked << ")";
    }
    text << "; result pages: "
         << memory_location(node_->results(), node_->buffer_count() * node_->chunk_bytes())
         << " (a page sits where the process that first wrote it runs)";
    if (!multi_node()) return text.str() + "; no messages";
    text << ", then " << to_string(choice.algorithm) << " between the " << layout_.nodes()
         << " node leaders";
  } else if (two_level() && kind == CollectiveKind::allreduce) {
    text << ": binomial inside each node, then " << to_string(choice.algorithm) << " between the "
         << layout_.nodes() << " node leaders";
  } else {
    text << ": " << to_string(choice.algorithm);
  }
  text << " — " << choice.why;
  return text.str();
}

}  // namespace hreduce::detail
