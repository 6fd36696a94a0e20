#include "src/model/message_steps.hpp"

#include <algorithm>
#include <cmath>

namespace hreduce::detail::model {
namespace {

// The message whose time is all latency: the probe's smallest.
constexpr double kSmallestMessageBytes = 8;

long long largest_power_of_two_at_most(long long q) {
  long long p = 1;
  while (p * 2 <= q) p *= 2;
  return p;
}

using Steps = std::vector<MessageStep>;

// Recursive doubling over the largest power of two, the others folded in
// before and out after (the runtime's PowerOfTwoFold, and MPICH's).
Steps recursive_doubling(long long Q, double m, double fold_per_step) {
  const long long p = largest_power_of_two_at_most(Q);
  Steps s;
  if (p < Q) s.push_back({m, m, 1, false, 1, false});
  for (long long d = 1; d < p; d *= 2) s.push_back({m, fold_per_step, d, true, 1, false, true});
  if (p < Q) s.push_back({m, 0, 1, false, 1, false});
  return s;
}

// Recursive halving: each round exchanges and folds half of what is left.
Steps recursive_halving(long long Q, double m) {
  const long long p = largest_power_of_two_at_most(Q);
  Steps s;
  if (p < Q) s.push_back({m, m, 1, false, 1, false});
  double part = m;
  for (long long d = p / 2; d >= 1; d /= 2) {
    part /= 2;
    s.push_back({part, part, d, true, 1, false, true});
  }
  return s;
}

Steps rabenseifner_allreduce(long long Q, double m) {
  Steps s = recursive_halving(Q, m);
  const long long p = largest_power_of_two_at_most(Q);
  double part = m / static_cast<double>(p);
  for (long long d = 1; d < p; d *= 2, part *= 2) {
    s.push_back({part, 0, d, true, 1, false, true});
  }
  if (p < Q) s.push_back({m, 0, 1, false, 1, false});
  return s;
}

Steps binomial_tree(long long Q, double m, double fold) {
  Steps s;
  for (long long d = 1; d < Q; d *= 2) s.push_back({m, fold, d, true, 1, false});
  return s;
}

// One root receives (or sends) Q-1 messages in turn: the first R-1 from its
// own node, the rest over its link.
Steps linear_at_root(long long Q, double m, double fold) {
  return {{m, fold, 1, false, Q - 1, true}};
}

Steps append(Steps a, const Steps& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Steps allreduce_steps(MessageAlgorithm a, long long Q, double m) {
  const double block = m / static_cast<double>(Q);
  switch (a) {
    case MessageAlgorithm::ring:
      return {{block, block, 1, false, Q - 1, false, true},
              {block, 0, 1, false, Q - 1, false, true}};
    case MessageAlgorithm::recursive_doubling: return recursive_doubling(Q, m, m);
    case MessageAlgorithm::rabenseifner: return rabenseifner_allreduce(Q, m);
    case MessageAlgorithm::binomial: return append(binomial_tree(Q, m, m), binomial_tree(Q, m, 0));
    case MessageAlgorithm::linear: return append(linear_at_root(Q, m, m), linear_at_root(Q, m, 0));
  }
  return {};
}

Steps reduce_steps(MessageAlgorithm a, long long Q, double m) {
  const double block = m / static_cast<double>(Q);
  switch (a) {
    case MessageAlgorithm::ring:
      return {{block, block, 1, false, Q - 1, false, true}, {block, 0, 1, false, Q - 1, true}};
    case MessageAlgorithm::binomial: return binomial_tree(Q, m, m);
    case MessageAlgorithm::linear: return linear_at_root(Q, m, m);
    default: return allreduce_steps(a, Q, m);
  }
}

Steps reduce_scatter_steps(MessageAlgorithm a, long long Q, double m) {
  const double block = m / static_cast<double>(Q);
  switch (a) {
    case MessageAlgorithm::ring: return {{block, block, 1, false, Q - 1, false, true}};
    case MessageAlgorithm::recursive_doubling:
    case MessageAlgorithm::rabenseifner: return recursive_halving(Q, m);
    case MessageAlgorithm::binomial: {
      Steps s = binomial_tree(Q, m, m);
      double part = m;
      for (long long d = 1; d < Q; d *= 2) s.push_back({part /= 2, 0, d, true, 1, false});
      return s;
    }
    case MessageAlgorithm::linear:
      return append(linear_at_root(Q, m, m), linear_at_root(Q, block, 0));
  }
  return {};
}

Steps scan_steps(MessageAlgorithm a, long long Q, double m) {
  switch (a) {
    case MessageAlgorithm::ring:
    case MessageAlgorithm::linear: return {{m, m, 1, false, Q - 1, true}};  // a chain
    case MessageAlgorithm::recursive_doubling: {
      Steps s;  // the hypercube: partial and prefix both fold what arrives
      for (long long d = 1; d < Q; d *= 2) s.push_back({m, 2 * m, d, true, 1, false, true});
      return s;
    }
    case MessageAlgorithm::binomial: return append(binomial_tree(Q, m, m), binomial_tree(Q, m, m));
    case MessageAlgorithm::rabenseifner: return {};
  }
  return {};
}

// How many of a node's R participants send over its link in a round.
long long crossing(const MessageStep& s, long long R) {
  if (s.one_flow) return 0;  // priced apart
  if (!s.xor_partner) return std::min(R, s.distance);
  if (R <= 4096 && (R & (R - 1)) != 0) {
    long long k = 0;
    for (long long r = 0; r < R; ++r) k += ((r ^ s.distance) / R) != 0;
    return k;
  }
  return s.distance >= R ? R : 0;
}

}  // namespace

const char* to_string(MessageAlgorithm algorithm) {
  switch (algorithm) {
    case MessageAlgorithm::ring: return "ring";
    case MessageAlgorithm::recursive_doubling: return "recursive_doubling";
    case MessageAlgorithm::rabenseifner: return "rabenseifner";
    case MessageAlgorithm::binomial: return "binomial";
    case MessageAlgorithm::linear: return "linear";
  }
  return "?";
}

std::vector<MessageStep> message_steps(MessageAlgorithm algorithm, const std::string& collective,
                                       long long Q, double m) {
  if (Q <= 1) return {};
  if (collective == "allreduce") return allreduce_steps(algorithm, Q, m);
  if (collective == "reduce") return reduce_steps(algorithm, Q, m);
  if (collective == "reduce_scatter_block") return reduce_scatter_steps(algorithm, Q, m);
  return scan_steps(algorithm, Q, m);
}

MessagePrice price_steps(const std::vector<MessageStep>& steps, long long R,
                         const MachinePrices& prices, double fold_rate) {
  MessagePrice p;
  double node_copy = 0;  // vector bytes per second the whole node copies
  for (int i = 0; i < prices.numa_nodes(); ++i) node_copy += prices.node_rate(Stream::copy, i, i);
  // A message's time beyond the smallest one's (the probe's curve: protocol
  // steps and copies), per message, between nodes and within one.
  auto beyond_latency = [&](double bytes, bool between) {
    return std::max(0.0, prices.message_seconds(bytes, between) -
                             prices.message_seconds(kSmallestMessageBytes, between));
  };
  const double latency_inter = prices.message_seconds(kSmallestMessageBytes, true);
  const double latency_intra = prices.message_seconds(kSmallestMessageBytes, false);
  // A step both ways: the probe's exchange where it has one, by size where
  // it has that (both copies at once: on one machine they share its memory).
  auto step_latency = [&](const MessageStep& s, bool between) {
    const double exchange = s.both_ways ? prices.exchange_seconds(between) : 0;
    return exchange > 0 ? exchange : between ? latency_inter : latency_intra;
  };
  auto step_beyond_latency = [&](const MessageStep& s, bool between) {
    const double smallest = prices.exchange_by_size_seconds(kSmallestMessageBytes, between);
    if (!s.both_ways || smallest <= 0) return beyond_latency(s.bytes, between);
    return std::max(0.0, prices.exchange_by_size_seconds(s.bytes, between) - smallest);
  };
  for (const MessageStep& s : steps) {
    const auto n = static_cast<double>(s.repeat);
    double latency = 0, transfer = 0;
    if (s.one_flow) {
      // One receiver: R-1 of the messages from its node, the rest over its link.
      const double inside = std::min<double>(n, static_cast<double>(R - 1)), outside = n - inside;
      latency = inside * latency_intra + outside * latency_inter;
      transfer = inside * beyond_latency(s.bytes, false) + outside * beyond_latency(s.bytes, true);
    } else {
      const long long k = crossing(s, R);
      // k flows share the link: each message's time beyond latency, k times.
      const double over_link = k > 0 ? static_cast<double>(k) * step_beyond_latency(s, true) : 0;
      // Shared-memory messages are copied in and out: two copies each.
      const double in_memory =
          R - k > 0 ? std::max(step_beyond_latency(s, false),
                               s.bytes * 2.0 * static_cast<double>(R - k) / node_copy)
                    : 0;
      latency = n * step_latency(s, k > 0);
      transfer = n * std::max(over_link, in_memory);
    }
    p.latency += latency;
    p.transfer += transfer;
    p.fold += n * s.fold_bytes / fold_rate;
  }
  p.applicable = !steps.empty();
  const double most = std::max({p.latency, p.transfer, p.fold});
  p.dominant = most == p.latency    ? "network latency"
               : most == p.transfer ? "message transfer"
                                    : "fold";
  return p;
}

}  // namespace hreduce::detail::model
