// Flat tree: every member sends straight to the root in step 1; the root
// combines p-1 inputs one after another. One step, but the root does all the
// work: only sensible for very few members.
//
//   step 1:  1 ─┐  2 ─┤  3 ─┤ … ─► 0
#include "tree_building.hpp"

namespace hreduce::schedules {

Schedule flat(int p, int root) {
  detail::check_tree_arguments("flat", p, root);
  std::vector<Transfer> transfers;
  for (int m = 0; m < p; ++m) {
    if (m != root) transfers.push_back({m, 1, root});
  }
  return Schedule(p, root, std::move(transfers), "flat");
}

}  // namespace hreduce::schedules
