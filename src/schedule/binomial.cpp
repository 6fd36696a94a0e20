// Binomial tree: the k-nomial tree with k = 2. In step s the virtual ranks
// that are odd multiples of 2^(s-1) send to the member 2^(s-1) below.
// ceil(log2 p) steps, one message per member per step; the classic choice
// for short vectors ((t_s + m t_w) log p).
//
//   p = 8:   step 1: 1→0 3→2 5→4 7→6   step 2: 2→0 6→4   step 3: 4→0
#include "tree_building.hpp"

namespace hreduce::schedules {

Schedule binomial(int p, int root) {
  detail::check_tree_arguments("binomial", p, root);
  return Schedule(p, root, detail::rotate_to_root(detail::knomial_transfers(p, 2), p, root),
                  "binomial");
}

}  // namespace hreduce::schedules
