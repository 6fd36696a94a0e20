// Ring allreduce. The vector is cut into P chunks; every member sends to its
// right neighbour (rank + 1) and receives from its left (rank - 1), all at
// once, in 2(P-1) steps.
//
// Reduce-scatter, steps s = 0 … P-2: member r sends chunk (r - s) and
// receives chunk (r - s - 1), combining the partial result that arrives on
// the left of its own. A chunk c starts at member c and travels once around
// the ring, so after P-1 steps member r owns chunk r+1 reduced over everyone.
// Allgather, P-1 more steps: member r passes on chunk (r + 1 - s) and stores
// the chunk (r - s) that arrives, reduced elsewhere.
//
//   P = 3, chunks a b c     step 0       step 1         then owns
//   member 0: a0 b0 c0      sends a0     sends c2∘c0    b1∘b2∘b0
//   member 1: a1 b1 c1      sends b1     sends a0∘a1    c2∘c0∘c1
//   member 2: a2 b2 c2      sends c2     sends b1∘b2    a0∘a1∘a2
//
// 2(P-1) messages of m/P bytes: 2(P-1)α + 2mβ(P-1)/P, as little data as
// Rabenseifner but P-1 start-ups per phase instead of log2 P (in exchange,
// every step only talks to neighbours, and any P runs without a fold). Chunk c is combined in the
// order x_c, x_{c+1}, …, x_{c-1} (rank order rotated), which is why the ring
// is for commutative ops only. That order is fixed by P alone, and each
// chunk is combined once and then copied, so the result is deterministic and
// bitwise identical on all members.
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void ring_allreduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                    Workspace& workspace) {
  require_commutative(op, "ring_allreduce");
  const int P = channel.size();
  if (P == 1) return;
  const int me = channel.rank();
  const int right = (me + 1) % P;
  const int left = (me + P - 1) % P;
  const std::size_t es = op.elem_size;
  const std::size_t base = n / static_cast<std::size_t>(P);
  const std::size_t rest = n % static_cast<std::size_t>(P);
  // Chunk c: base elements, one more for the first `rest` chunks.
  const auto offset = [&](int c) {
    const auto cc = static_cast<std::size_t>(c);
    return cc * base + (cc < rest ? cc : rest);
  };
  const auto length = [&](int c) { return base + (static_cast<std::size_t>(c) < rest ? 1 : 0); };
  void* tmp = workspace.get(kSlotReceive, (base + 1) * es);

  for (int s = 0; s < P - 1; ++s) {
    const int send_c = (me - s + P) % P;
    const int recv_c = (me - s - 1 + 2 * P) % P;
    const std::size_t recv_n = length(recv_c);
    channel.sendrecv(right, bytes_at(buf, offset(send_c), es), length(send_c) * es, left, tmp,
                     recv_n * es, tags::ring_reduce_scatter);
    if (recv_n > 0) {
      std::byte* mine = bytes_at(buf, offset(recv_c), es);
      op.apply(tmp, mine, mine, recv_n);
    }
  }
  for (int s = 0; s < P - 1; ++s) {
    const int send_c = (me + 1 - s + P) % P;
    const int recv_c = (me - s + P) % P;
    channel.sendrecv(right, bytes_at(buf, offset(send_c), es), length(send_c) * es, left,
                     bytes_at(buf, offset(recv_c), es), length(recv_c) * es, tags::ring_allgather);
  }
}

}  // namespace hreduce::detail::inter
