// Binary tree by range splitting: the subtree of ranks [lo, hi] is rooted at
// lo; (lo, hi] is cut in two halves, each a subtree of its own. lo first
// receives the lower half, then (same step or later) the upper one, so every combine joins
// adjacent ranges for any p. A subtree sends one step after its slowest
// child arrived.
//
//   p = 6:   0 ◄─ 1 ◄─ 2         (halves {1,2,3}, {4,5})
//            0 ◄─ 4 ◄─ 5         1 ◄─ 3
#include <algorithm>
#include <utility>

#include "tree_building.hpp"

namespace hreduce::schedules {
namespace {

// Emits the subtree [lo, hi] and returns the step at which it is complete.
// The upper half never arrives before the lower one: lo must hold (lo, split)
// before it can append [split, hi] on the right.
int build(int lo, int hi, std::vector<Transfer>& out) {
  if (lo == hi) return 0;
  const int first = lo + 1;
  const int split = first + (hi - first + 2) / 2;  // the lower half is the larger
  int complete = build(first, split - 1, out) + 1;
  out.push_back({first, complete, lo});
  if (split <= hi) {
    complete = std::max(complete, build(split, hi, out) + 1);
    out.push_back({split, complete, lo});
  }
  return complete;
}

}  // namespace

Schedule binary(int p, int root) {
  detail::check_tree_arguments("binary", p, root);
  std::vector<Transfer> transfers;
  build(0, p - 1, transfers);
  return Schedule(p, root, detail::rotate_to_root(std::move(transfers), p, root), "binary");
}

}  // namespace hreduce::schedules
