// The message pattern of an algorithm between Q participants, as steps, and
// the price of those steps on a machine where R consecutive participants
// share a node. Serves both hreduce's phase between nodes (the algorithm
// decide_between_processes() picked) and the flat-MPI algorithms the
// prediction compares against.
//
// A step is one round in which every participant sends one message of
// `bytes` to the participant at `distance` (XOR-partner or +distance,
// ring-style) and folds `fold_bytes` it received; `repeat` identical rounds.
// In a round, the participants of one node whose partner lies on another
// node share that node's link; those whose partner is on the same node
// share its memory bandwidth (a shared-memory message is copied twice):
//
//    node 0: r0 r1 r2 r3 ──link──► node 1     ring, R = 4: one flow on the
//            └─►└─►└─►                         link, three in memory
#pragma once

#include <string>
#include <vector>

#include "src/model/machine_prices.hpp"

namespace hreduce::detail::model {

struct MessageStep {
  double bytes = 0;
  double fold_bytes = 0;
  long long distance = 1;
  bool xor_partner = false;  // partner = rank XOR distance; else rank + distance
  long long repeat = 1;
  bool one_flow = false;  // only one participant sends (linear gather / scatter)
  // Every participant sends and receives in the step (recursive doubling,
  // a hypercube, a ring): priced as the probe's exchange where it has one.
  bool both_ways = false;
};

// The flat algorithms compared against (and hreduce's own, by the same name).
enum class MessageAlgorithm { ring, recursive_doubling, rabenseifner, binomial, linear };
inline constexpr MessageAlgorithm kFlatAlgorithms[] = {
    MessageAlgorithm::ring, MessageAlgorithm::recursive_doubling, MessageAlgorithm::rabenseifner,
    MessageAlgorithm::binomial, MessageAlgorithm::linear};
const char* to_string(MessageAlgorithm algorithm);

// The steps of `algorithm` for `collective` ("reduce", "allreduce",
// "reduce_scatter_block", "scan", "exscan") over Q participants with `m`
// input bytes each; empty when the algorithm does not serve the collective
// (Rabenseifner's scan).
std::vector<MessageStep> message_steps(MessageAlgorithm algorithm, const std::string& collective,
                                       long long Q, double m);

struct MessagePrice {
  double latency = 0;   // α terms
  double transfer = 0;  // bytes over the link or the node's memory
  double fold = 0;
  bool applicable = true;
  double total() const { return latency + transfer + fold; }
  // "network latency", "network bandwidth", "node memory (shared-memory
  // messages)", "fold": whichever took longest.
  std::string dominant;
};

// `ranks_per_node` consecutive participants share a node; `fold_rate`:
// vector bytes per second of the op's fold.
MessagePrice price_steps(const std::vector<MessageStep>& steps, long long ranks_per_node,
                         const MachinePrices& prices, double fold_rate);

}  // namespace hreduce::detail::model
