// Small helpers the tree generators share.
#pragma once

#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"

namespace hreduce::detail {

// Generators build trees rooted at virtual rank 0; this maps virtual rank v
// to member (v + root) mod p.
inline std::vector<Transfer> rotate_to_root(std::vector<Transfer> virtual_transfers, int p,
                                            int root) {
  for (Transfer& t : virtual_transfers) {
    t.sender = (t.sender + root) % p;
    t.receiver = (t.receiver + root) % p;
  }
  return virtual_transfers;
}

inline void check_tree_arguments(const char* generator, int p, int root) {
  if (p < 1) {
    throw ArgumentError(std::string("schedules::") + generator +
                        ": member count must be >= 1, got " + std::to_string(p));
  }
  if (root < 0 || root >= p) {
    throw ArgumentError(std::string("schedules::") + generator + ": root " + std::to_string(root) +
                        " is outside 0.." + std::to_string(p - 1));
  }
}

// The k-nomial tree over virtual ranks 0..p-1 (k = 2 is the binomial tree).
std::vector<Transfer> knomial_transfers(int p, int k);

}  // namespace hreduce::detail
