// Binomial-tree broadcast: the reduce tree run backwards. Members are
// numbered relative to the root (v = (rank - root) mod P). A member first
// receives from v minus its lowest set bit, then sends to v + 2^k for every
// 2^k below that bit, largest first, so the members that have the data
// double every step: ⌈log2 P⌉ steps of (α + mβ).
//
//   P = 8, root 0    step 1    step 2       step 3
//                    0→4       0→2 4→6      0→1 2→3 4→5 6→7
//
// Any P: sends to v + 2^k >= P are skipped. Each member receives once, before
// it sends, so blocking sends cannot deadlock.
#include <string>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void binomial_broadcast(Channel& channel, void* buf, std::size_t bytes, int root) {
  const int P = channel.size();
  if (root < 0 || root >= P) {
    throw ArgumentError("binomial_broadcast: root " + std::to_string(root) + " is outside 0.." +
                        std::to_string(P - 1));
  }
  const int v = (channel.rank() - root + P) % P;
  const auto real = [&](int virtual_rank) { return (virtual_rank + root) % P; };

  // Receive from the parent: v with its lowest set bit cleared.
  long long mask = 1;
  while (mask < P) {
    if ((v & mask) != 0) {
      channel.recv(real(v - static_cast<int>(mask)), buf, bytes, tags::binomial_broadcast);
      break;
    }
    mask <<= 1;
  }
  // Send to the children: v + 2^k for 2^k below that bit (for the root, below
  // the first power of two >= P), largest first.
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask < P) {
      channel.send(real(v + static_cast<int>(mask)), buf, bytes, tags::binomial_broadcast);
    }
  }
}

}  // namespace hreduce::detail::inter
