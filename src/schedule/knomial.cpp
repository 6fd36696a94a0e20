// k-nomial tree: in step s (1-based) every virtual rank v that is j·k^(s-1)
// past a multiple of k^s (j = 1..k-1) sends to v - j·k^(s-1). After step s
// each surviving member holds the k^s ranks above it, so the tree is done
// in ceil(log_k p) steps, each member receiving up to k-1 messages a step.
// Works for any p: members past the end simply do not exist.
//
//   k = 3, p = 9:   step 1: 1,2→0  4,5→3  7,8→6     step 2: 3,6→0
#include "tree_building.hpp"

namespace hreduce {
namespace detail {

std::vector<Transfer> knomial_transfers(int p, int k) {
  std::vector<Transfer> transfers;
  long long span = 1;  // k^(s-1)
  for (int step = 1; span < p; ++step, span *= k) {
    for (long long v = 0; v < p; v += span * k) {
      for (int j = 1; j < k && v + j * span < p; ++j) {
        transfers.push_back({static_cast<int>(v + j * span), step, static_cast<int>(v)});
      }
    }
  }
  return transfers;
}

}  // namespace detail

namespace schedules {

Schedule knomial(int p, int k, int root) {
  detail::check_tree_arguments("knomial", p, root);
  if (k < 2)
    throw ArgumentError("schedules::knomial: radix k must be >= 2, got " + std::to_string(k));
  return Schedule(p, root, detail::rotate_to_root(detail::knomial_transfers(p, k), p, root),
                  std::to_string(k) + "-nomial");
}

}  // namespace schedules
}  // namespace hreduce
