// Chain: the partial result walks along the rank line towards the root, one
// hop per step. Members below the root pass upwards, members above it pass
// downwards, so both halves arrive nearest first and every partial result is
// a contiguous rank range. p-1 steps at worst; the basis of pipelining.
//
//   root 0:  3 ─1─► 2 ─2─► 1 ─3─► 0
#include "tree_building.hpp"

namespace hreduce::schedules {

Schedule chain(int p, int root) {
  detail::check_tree_arguments("chain", p, root);
  std::vector<Transfer> transfers;
  for (int m = 0; m < root; ++m) transfers.push_back({m, m + 1, m + 1});
  for (int m = root + 1; m < p; ++m) transfers.push_back({m, p - m, m - 1});
  return Schedule(p, root, std::move(transfers), "chain");
}

}  // namespace hreduce::schedules
