// Building one node's call (node_call.hpp): the node level through the
// shared segment (the way node_way() picks), the phase between nodes (the
// algorithm decide_between_processes() picks), and the node level's
// distribution of the nodes' result.
#include <algorithm>
#include <cmath>
#include <map>

#include "src/hybrid/inter_decision.hpp"
#include "src/hybrid/inter_process_group.hpp"  // InterOptions: the runtime's defaults
#include "src/model/message_steps.hpp"
#include "src/model/node_call.hpp"
#include "src/node/node_group.hpp"
#include "src/node/node_way.hpp"
#include "src/node/way_by_measure.hpp"

namespace hreduce::detail::model {
namespace {

// The leaders' status word (CallStatus in src/hybrid/agreement.cpp: the
// call's signature, counts and roots, and a failure's text of 240 bytes).
constexpr double kStatusMessageBytes = 304;

bool is_scan(CollectiveKind kind) {
  return kind == CollectiveKind::scan || kind == CollectiveKind::exscan;
}

// What the node level computes: the call itself on one node; across
// nodes, the node's partial (a reduce to its first process) or its scan.
CollectiveKind node_kind(CollectiveKind kind, int nodes) {
  if (nodes == 1 || is_scan(kind)) return kind;
  return CollectiveKind::reduce;
}

// The race the runtime runs when it builds a team of two processes on a
// node (node_single_copy_race.cpp), priced: a call of `kind` (the node
// level's) of kNodeRaceBytes between two single-threaded processes, each
// way.
bool single_copy_wins_race(const MachinePrices& prices, const Topology& node,
                           const ModelSettings& settings, CollectiveKind kind) {
  ModelSettings s = settings;
  s.single_copy_race = false;
  s.zero_copy = false;
  s.measured_node_way = NodeWay::single_copy;  // the race times each way alone
  const char* collective =
      kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::reduce_scatter_block
          ? "reduce_scatter_block"
          : to_string(kind);
  const CallCase race{collective, kNodeRaceBytes, "double"};
  const Layout pair{1, 2, 1};
  RaceTimes times;
  times.single_copy_seconds = predict_hreduce(prices, node, pair, race, s).seconds;
  s.single_copy = false;
  times.chunks_seconds = predict_hreduce(prices, node, pair, race, s).seconds;
  return single_copy_won(times);
}

}  // namespace

// The way the measure settles on where the host stays as the prices say:
// from the way the call's size gives, the other where it pays by the
// runtime's own margin (other_way_pays), each way priced apart.
NodeWay NodeCall::measured_way(NodeWay by_size) const {
  const bool single_copy = by_size == NodeWay::single_copy;
  const NodeWay other = single_copy ? NodeWay::chunks : NodeWay::single_copy;
  ModelSettings s = settings_;
  s.measured_node_way = by_size;
  const double cost = predict_hreduce(prices_, node_, layout_, call_, s).seconds;
  s.measured_node_way = other;
  const double other_cost = predict_hreduce(prices_, node_, layout_, call_, s).seconds;
  return other_way_pays(single_copy, cost, other_cost) ? other : by_size;
}

void NodeCall::node_level_up() {
  const int P = layout_.processes;
  if (P == 1 || !settings_.node_shared_memory) return;
  std::vector<int> leaders;
  for (int p = 0; p < P; ++p) leaders.push_back(leader(p));
  const CollectiveKind kind = node_kind(kind_, layout_.nodes);
  NodeShape shape{P, InterOptions{}.node_chunk_bytes,
                  settings_.single_copy && prices_.single_copy_available()};
  if (shape.single_copy && P == 2 && settings_.single_copy_race &&
      !single_copy_wins_race(prices_, node_, settings_, kind)) {
    shape.chunks_won = kind_bit(kind);
  }
  const std::size_t elem_size = element_bytes(call_.type);
  NodeWay way = node_way(kind, call_.bytes_per_member, elem_size, false, shape,
                         is_scan(kind_) && layout_.nodes > 1);
  const bool measured = measures_way(kind, call_.bytes_per_member, elem_size, way, shape);
  if (measured) {
    measured_from_ = way;
    way = settings_.measured_node_way ? *settings_.measured_node_way : measured_way(way);
  }
  decisions_ += std::string("; node level: ") + std::string(to_string(way)) +
                (measured ? " (by measure)" : "") + " over " + std::to_string(P) + " processes";
  switch (way) {
    case NodeWay::inline_announcement: node_inline(leaders); break;
    case NodeWay::single_copy: node_single_copy(leaders); break;
    case NodeWay::chunks: node_chunks(leaders); break;
  }
}

// Every input inside its process's announcement; whoever needs a result
// reads the others' from there and folds.
void NodeCall::node_inline(const std::vector<int>& leaders) {
  const auto P = static_cast<double>(leaders.size());
  const CollectiveKind kind = node_kind(kind_, layout_.nodes);
  for (int l : leaders) {
    stream(l, m_, Stream::copy, prices_.numa_of_pu(member_pu(l)), Level::node_segment,
           "write the announcement");
  }
  meet_on_own_lines(leaders, "announcements", waiters_of(kind));
  for (std::size_t q = 0; q < leaders.size(); ++q) {
    double reads = (P - 1) * m_;
    if (kind == CollectiveKind::reduce && q != 0) reads = 0;
    if (kind == CollectiveKind::reduce_scatter_block) reads = (P - 1) * m_ / P;
    if (is_scan(kind)) reads = static_cast<double>(q) * m_;
    const double announcement = kind == CollectiveKind::reduce_scatter_block ? m_ / P : m_;
    take_lines(leaders[q], reads / announcement, announcement, Level::node_segment);
    stream(leaders[q], reads, Stream::fold, prices_.numa_of_pu(member_pu(leaders[q])),
           Level::node_segment, "fold the announcements");
  }
}

// Two processes read (and write) each other's memory with
// process_vm_readv/writev in pieces of a chunk; the calls that touch one
// process's memory queue there. The runtime's own cut (single_copy_cut)
// says how much of the vector each process computes, for whom.
void NodeCall::node_single_copy(const std::vector<int>& leaders) {
  const CollectiveKind kind = node_kind(kind_, layout_.nodes);
  const std::size_t es = element_bytes(call_.type);
  const std::size_t count = call_.bytes_per_member / es;
  // Who wants both inputs folded (node_single_copy.cpp's Wanted): an
  // allreduce both processes, a reduce process 0, a scan process 1 (process
  // 0's prefix is its own input, which it copies over, as the bench's
  // buffers are apart), an exscan none (process 1 copies x_0). A
  // reduce_scatter's processes each fold their own part.
  int folders = 0, receiver = 0;
  if (kind == CollectiveKind::allreduce) folders = 2;
  if (kind == CollectiveKind::reduce) folders = 1, receiver = 0;
  if (kind == CollectiveKind::scan) folders = 1, receiver = 1;
  const bool scan = kind == CollectiveKind::scan;
  const double cut =
      kind == CollectiveKind::reduce_scatter_block
          ? m_ / 2
          : static_cast<double>(single_copy_cut(count, es, folders, receiver, scan) * es);
  const double part[2] = {cut, m_ - cut};
  const double chunk = static_cast<double>(InterOptions{}.node_chunk_bytes);
  const double fixed = prices_.single_copy_seconds(0);
  const double rate = 1 / (prices_.single_copy_seconds(1024) - fixed) * 1024;
  int into[2];
  for (int q = 0; q < 2; ++q) {
    into[q] = sim_.add_resource("single copies into process " + std::to_string(q), rate);
  }
  auto copy_calls = [&](int q, double bytes, const char* term) {
    if (bytes <= 0) return;
    Task t;
    t.after = after_of(leaders[static_cast<std::size_t>(q)]);
    t.latency = fixed * std::ceil(bytes / chunk);
    t.work = bytes;
    t.resources = {into[1 - q]};
    t.level = Level::node_segment;
    t.term = term;
    then(leaders[static_cast<std::size_t>(q)], sim_.add_task(std::move(t)));
  };
  for (int q = 0; q < 2; ++q) {
    const int l = leaders[static_cast<std::size_t>(q)];
    const int numa = prices_.numa_of_pu(member_pu(l));
    if (scan && q == 0) stream(l, m_, Stream::copy, numa, Level::node_segment, "copy own prefix");
    if (kind == CollectiveKind::exscan) {
      // Process 1 reads x_0 into its prefix; process 0 writes it there.
      copy_calls(q, part[q], q == 1 ? "process_vm_readv" : "process_vm_writev");
      continue;
    }
    copy_calls(q, part[q], "process_vm_readv");
    stream(l, part[q], Stream::fold, numa, Level::node_segment, "fold (single copy)");
    // The other's result (or its own, where it is the other's receiver).
    const bool other_wants = folders == 2 || (folders == 1 && q != receiver);
    if (other_wants) copy_calls(q, part[q], "process_vm_writev");
  }
  synchronise(leaders, Level::waiting, "released");
}

// The staging ring, chunk by chunk: stage (copy in), fold a slice of every
// process's chunk in rank order, drain (copy out); with Team::allocate's
// buffers (zero copy) the folders read and write them where they are.
void NodeCall::node_chunks(const std::vector<int>& leaders) {
  const CollectiveKind kind = node_kind(kind_, layout_.nodes);
  const auto P = static_cast<double>(leaders.size());
  const double chunk = static_cast<double>(InterOptions{}.node_chunk_bytes);
  const int chunks = std::max(1, static_cast<int>(std::ceil(m_ / chunk)));
  const double c = m_ / chunks;
  for (int k = 0; k < chunks; ++k) {
    for (int l : leaders) {
      const int numa = prices_.numa_of_pu(member_pu(l));
      if (!settings_.zero_copy) stream(l, c, Stream::copy, numa, Level::node_segment, "stage");
    }
    meet_on_own_lines(leaders, "staged");
    std::map<int, double> reads;
    for (int from : leaders) reads[prices_.numa_of_pu(member_pu(from))] += c / P;
    for (int l : leaders) {
      // The staged chunks were written this call by the other processes'
      // cores: a folder pulls their lines over, at the probe's price for
      // data between cores (16 processes of a 16-core machine: 128 KiB
      // reduce 67 us, 21 us predicted without it).
      if (!settings_.zero_copy) pull_lines(l, c * (P - 1) / P, "staged");
      stream_spread(l, reads, Stream::fold, Level::node_segment, "fold (node chunks)");
    }
    meet_on_own_lines(leaders, "folded");
    for (std::size_t q = 0; q < leaders.size() && !settings_.zero_copy; ++q) {
      double drained = c;
      if (kind == CollectiveKind::reduce && q != 0) drained = 0;
      if (kind == CollectiveKind::reduce_scatter_block) drained = c / P;
      // Every slice but its own was folded on another core.
      pull_lines(leaders[q], drained * (P - 1) / P, "folded");
      stream(leaders[q], drained, Stream::copy, prices_.numa_of_pu(member_pu(leaders[q])),
             Level::node_segment, "drain");
    }
  }
}

namespace {

// The message pattern of an inter-process algorithm, in message_steps' terms.
std::pair<MessageAlgorithm, std::string> pattern_of(InterAlgorithm algorithm) {
  switch (algorithm) {
    case InterAlgorithm::binomial: return {MessageAlgorithm::binomial, "reduce"};
    case InterAlgorithm::rabenseifner: return {MessageAlgorithm::rabenseifner, "allreduce"};
    case InterAlgorithm::ring: return {MessageAlgorithm::ring, "allreduce"};
    case InterAlgorithm::hypercube: return {MessageAlgorithm::recursive_doubling, "scan"};
    case InterAlgorithm::pairwise: return {MessageAlgorithm::ring, "reduce_scatter_block"};
    case InterAlgorithm::reduce_then_scatter:
      return {MessageAlgorithm::binomial, "reduce_scatter_block"};
    default: return {MessageAlgorithm::recursive_doubling, "allreduce"};
  }
}

}  // namespace

// The leaders check that every process called the same thing (a status
// allreduce of a few hundred bytes: latency alone), then run the algorithm
// the runtime picks for this shape. Every node is alike: this node's
// participants stand for all.
void NodeCall::between_nodes() {
  const int N = layout_.nodes, P = layout_.processes;
  const bool node_level = P > 1 && settings_.node_shared_memory;
  if (N == 1 && (P == 1 || node_level)) return;
  InterShape shape;
  shape.processes = N * P;
  shape.nodes = N;
  shape.node_level = node_level;
  shape.grouped_by_node = !node_level && P > 1 && N > 1 && InterOptions{}.by_node;
  InterOverrides overrides;
  overrides.allreduce = settings_.inter_allreduce;
  overrides.reduce_scatter = settings_.inter_reduce_scatter;
  const InterDecision d =
      decide_between_processes(kind_, call_.bytes_per_member, true, shape, overrides);
  if (d.participants <= 1) return;
  decisions_ += std::string("; between processes: ") + std::string(to_string(d.algorithm)) +
                " over " + std::to_string(d.participants);
  const long long per_node = std::max(1, d.participants / N);
  const auto [algorithm, pattern] = pattern_of(d.algorithm);
  const double fold_rate =
      cached_ ? cached_stream_rate(Stream::fold) : prices_.one_thread_rate(Stream::fold, 0, 0);
  // Scans by messages alone end with a second status round (by_messages.cpp).
  const double status_rounds = is_scan(kind_) && !node_level ? 2 : 1;
  const MessagePrice status =
      price_steps(message_steps(MessageAlgorithm::recursive_doubling, "allreduce", d.participants,
                                kStatusMessageBytes),
                  per_node, prices_, fold_rate);
  const MessagePrice data = price_steps(message_steps(algorithm, pattern, d.participants, m_),
                                        per_node, prices_, fold_rate);
  std::vector<int> senders;
  for (long long p = 0; p < per_node; ++p) senders.push_back(leader(static_cast<int>(p)));
  Task start;
  for (int s : senders) {
    for (int a : after_of(s)) start.after.push_back(a);
  }
  start.level = Level::waiting;
  int previous = sim_.add_task(std::move(start));
  const std::pair<double, const char*> parts[] = {
      {status_rounds * (status.latency + status.transfer) + data.latency, "network latency"},
      {data.transfer, "message transfer"},
      {data.fold, "fold between nodes"}};
  for (const auto& [seconds, term] : parts) {
    Task t;
    t.after = {previous};
    t.latency = seconds;
    t.level = Level::between_nodes;
    t.term = term;
    previous = sim_.add_task(std::move(t));
  }
  for (int s : senders) then(s, previous);
}

// Across nodes the node's first process holds the nodes' result; the other
// processes of the node take it (or their prefix) through the segment.
void NodeCall::node_level_down() {
  const int P = layout_.processes;
  if (P == 1 || !settings_.node_shared_memory || layout_.nodes == 1 ||
      kind_ == CollectiveKind::reduce) {
    return;
  }
  std::vector<int> leaders;
  for (int p = 0; p < P; ++p) leaders.push_back(leader(p));
  const int from = prices_.numa_of_pu(member_pu(leaders.front()));
  if (!settings_.zero_copy) {
    stream(leaders.front(), m_, Stream::copy, from, Level::node_segment, "publish the result");
  }
  synchronise(leaders, Level::waiting, "node result published");
  const double part = kind_ == CollectiveKind::reduce_scatter_block ? m_ / P : m_;
  for (std::size_t q = 1; q < leaders.size(); ++q) {
    stream(leaders[q], part, is_scan(kind_) ? Stream::fold : Stream::copy, from,
           Level::node_segment, "take the node's result");
  }
}

}  // namespace hreduce::detail::model
