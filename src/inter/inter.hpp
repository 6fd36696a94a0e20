// The inter-process (inter-node) algorithms: reductions between the leaders
// of several processes, written only against the abstract Channel so they
// run unchanged over MPI and over the in-memory channel of the tests. One
// algorithm per file (src/inter/*.cpp, each opening with how its
// data moves); this header declares them all, with the cost model that
// chooses between them.
//
// Conventions shared by every function here:
//  - Buffers are raw bytes; an element is `op.elem_size` bytes and `n` counts
//    elements. n = 0 is legal: the participants still exchange (empty)
//    messages, so a call synchronises like a non-empty one.
//  - Any participant count P >= 1, not only powers of two.
//  - Rank order: every combine puts the operand of the lower-ranked range on
//    the left, and every range combined is contiguous, so a non-commutative
//    op yields exactly x_0 ∘ x_1 ∘ … ∘ x_{P-1}. The functions marked
//    COMMUTATIVE ONLY throw Error for a non-commutative op, on every
//    participant and before sending anything, so nobody is left waiting.
//  - Determinism: the combine order is fixed by the algorithm and P, never by
//    timing; an allreduce leaves bitwise identical results everywhere (each
//    element is either computed once and distributed, or computed from
//    identical operands in identical order by both partners).
//  - Tags: each algorithm and step has tags of its own (src/transport/tags.hpp), so
//    algorithms called back to back on one channel never take each other's
//    messages. Blocking sends are safe: no algorithm relies on a send
//    returning before the matching receive is posted.
//  - Scratch memory comes from the Workspace (slots: workspace.hpp); in steady state
//    a call allocates nothing else.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "hreduce/schedule.hpp"
#include "hreduce/team.hpp"
#include "src/common/copy.hpp"
#include "src/transport/channel.hpp"
#include "src/transport/tags.hpp"
#include "src/transport/workspace.hpp"

namespace hreduce::detail {

namespace inter {

// --- the generic executor (schedule_executor.cpp) ----------------------

// Runs a reduction schedule over the channel: each member receives from its
// predecessors in Schedule::incoming order (increasing step, nearest first),
// combining a predecessor ranked below it on the left, then sends its partial
// result to its successor. The schedule's root ends with the result in `buf`;
// every other member's `buf` holds its partial result. The schedule must be
// valid (Schedule::validate) and have channel.size() members; every message
// carries `tag`.
void execute_schedule(Channel& channel, const Schedule& schedule, void* buf, std::size_t n,
                      const ErasedOp& op, Workspace& workspace, int tag);

// schedules::binomial(P, 0), built once per thread and P and then reused, so
// steady-state calls do not allocate.
const Schedule& cached_binomial_schedule(int P);

// --- reduce and broadcast ------------------------------------------------------

// Root's buf receives x_0 ∘ … ∘ x_{P-1}; other members' buf is clobbered.
// The binomial tree rooted at 0 keeps rank order for any op; a non-zero root
// gets the result forwarded from member 0.
void binomial_reduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op, int root,
                     Workspace& workspace);

// Root's `bytes` bytes of buf land in every member's buf.
void binomial_broadcast(Channel& channel, void* buf, std::size_t bytes, int root);

// --- allreduce -----------------------------------------------------------------

// Every member's buf receives x_0 ∘ … ∘ x_{P-1}. ⌈log2 P⌉ exchanges of the
// whole vector (plus two when P is not a power of two). Any op.
void recursive_doubling_allreduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                                  Workspace& workspace);

// Same result: reduce-scatter by recursive halving, then allgather by
// recursive doubling; 2 log2 P messages but only about 2n(P-1)/P elements
// sent per member. Any op.
void rabenseifner_allreduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                            Workspace& workspace);

// Same result along a ring: 2(P-1) messages of n/P elements each.
// COMMUTATIVE ONLY.
void ring_allreduce(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                    Workspace& workspace);

// --- scan ----------------------------------------------------------------------

// Inclusive: out = x_0 ∘ … ∘ x_rank. Exclusive: out = x_0 ∘ … ∘ x_{rank-1}
// for rank > 0, and member 0's out is left untouched. in == out works.
void hypercube_scan(Channel& channel, const void* in, void* out, std::size_t n, const ErasedOp& op,
                    bool exclusive, Workspace& workspace);

// --- reduce_scatter ----------------------------------------------------------------

// `in` holds Σ counts elements; out receives block `rank` of the reduced
// vector (counts[rank] elements from offset Σ_{i<rank} counts[i]). in == out
// works: the block lands at the start of out.
//
// Pairwise exchange, P-1 steps. COMMUTATIVE ONLY.
void pairwise_reduce_scatter(Channel& channel, const void* in, void* out, const std::size_t* counts,
                             const ErasedOp& op, Workspace& workspace);
// Binomial reduce of the whole vector to member 0, which sends each block to
// its owner. Any op.
void reduce_then_scatter(Channel& channel, const void* in, void* out, const std::size_t* counts,
                         const ErasedOp& op, Workspace& workspace);

// --- shared pieces (power_of_two_fold.cpp) -----------------------------------

// The pre- and post-step that lets recursive doubling and Rabenseifner run on
// any P: with p' the largest power of two <= P and r = P - p', ranks 2i and
// 2i+1 (i < r) first combine into the odd one, which takes virtual rank i;
// ranks >= 2r take virtual rank rank - r. Virtual rank v then stands for a
// contiguous rank range, ranges ordered like v.
struct PowerOfTwoFold {
  int pow2 = 1;   // p'
  int extra = 0;  // r
  int vrank = 0;  // this member's virtual rank, -1 while it sits out
};

// The pre-step: even ranks below 2r send their buf to the odd rank above,
// which combines it on the left (its temporary is `scratch`, n elements).
PowerOfTwoFold fold_to_power_of_two(Channel& channel, void* buf, std::size_t n, const ErasedOp& op,
                                    void* scratch, int tag);
// The post-step: odd ranks below 2r send the result down to the even rank.
void unfold_from_power_of_two(Channel& channel, const PowerOfTwoFold& fold, void* buf,
                              std::size_t bytes, int tag);
// The real rank that plays virtual rank v.
inline int real_rank(const PowerOfTwoFold& fold, int v) {
  return v < fold.extra ? 2 * v + 1 : v + fold.extra;
}

// Throws Error("<algorithm>: needs a commutative op, ...") for a
// non-commutative op.
void require_commutative(const ErasedOp& op, const char* algorithm);

}  // namespace inter

// --- the cost model (cost_model.cpp) -------------------------------------------

// The α–β model: a message of m bytes costs alpha + m·beta seconds. The
// defaults are a typical InfiniBand/RoCE cluster (2 µs latency, 5 GB/s).
struct CostModel {
  double alpha_seconds = 2e-6;
  double beta_seconds_per_byte = 2e-10;
};

enum class InterAlgorithm {
  automatic,
  binomial,
  recursive_doubling,
  rabenseifner,
  ring,
  hypercube,
  pairwise,
  reduce_then_scatter,
};

std::string_view to_string(InterAlgorithm algorithm);
std::optional<InterAlgorithm> parse_inter_algorithm(std::string_view name);

struct Choice {
  InterAlgorithm algorithm = InterAlgorithm::automatic;
  std::string why;  // every candidate's predicted time, and the winner
};

// m = bytes per participant. The cheapest of
//   recursive doubling  ⌈log2 P⌉(α + mβ)
//   Rabenseifner        2α⌈log2 P⌉ + 2mβ(P-1)/P
//   ring                2(P-1)α + 2mβ(P-1)/P       (commutative ops only)
// where the first two add 2(α + mβ) when P is not a power of two (the fold
// and unfold steps). Ties go to the earlier line.
Choice choose_allreduce(int P, std::size_t bytes, bool commutative, const CostModel& model);
// The same choice without the explanation: what a call's fast path uses
// (building the text would allocate on every call).
InterAlgorithm cheapest_allreduce(int P, std::size_t bytes, bool commutative,
                                  const CostModel& model);
// total_bytes = the whole vector (Σ counts · element size). Pairwise exchange
// for commutative ops, reduce-then-scatter otherwise; `why` gives both
// predictions:
//   pairwise             (P-1)α + mβ(P-1)/P
//   reduce_then_scatter  ⌈log2 P⌉(α + mβ) + (P-1)(α + mβ/P)
Choice choose_reduce_scatter(int P, std::size_t total_bytes, bool commutative,
                             const CostModel& model);
// Always the binomial tree: ⌈log2 P⌉(α + mβ) (one more α + mβ when the root
// is not member 0).
Choice choose_reduce(int P, std::size_t bytes, bool commutative, const CostModel& model);
// Always the hypercube: ⌈log2 P⌉(α + mβ).
Choice choose_scan(int P, std::size_t bytes, bool commutative, const CostModel& model);

}  // namespace hreduce::detail
