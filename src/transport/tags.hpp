// Every message tag of the point-to-point messages between processes, in one
// table. A Channel matches messages by (sender, receiver, tag), and a
// SubChannel passes its parent's tags through unchanged, so everything sent
// over one channel (the process group's MpiChannel, its node and leader
// sub-channels) draws its tags from here and no two users may share one.
//
// All tags are below kTagBound (32767, the least MPI_TAG_UB MPI allows). A
// tag marked "+ k" is a base: step k of that algorithm uses base + k, for
// k < kStepTags (log2 of any int count), so it takes kStepTags tags.
#pragma once

namespace hreduce::detail::tags {

inline constexpr int kTagBound = 32767;
inline constexpr int kStepTags = 32;

// --- building a team (construction only) -----------------------------------
// make_mpi_team (src/hybrid/mpi_team.cpp): each process's value to rank 0.
inline constexpr int process_allgather = 7;
// The node's shared segment (src/node/segment.cpp): its name and size, from
// the creator to the others; whether each attached, back to the creator;
// whether all did, from the creator to the others.
inline constexpr int segment_name = 20;
inline constexpr int segment_attached = 21;
inline constexpr int segment_ready = 22;

// --- the inter-process algorithms (src/inter/*.cpp) ---------------
inline constexpr int binomial_reduce = 100;              // partial results up the tree
inline constexpr int binomial_forward = 101;             // result from member 0 to root
inline constexpr int binomial_broadcast = 110;           // root's data down the tree
inline constexpr int recursive_doubling_fold = 120;      // pre-step of a P not a power of two
inline constexpr int recursive_doubling_unfold = 121;    // its post-step
inline constexpr int recursive_doubling_step = 122;      // + k: exchange k
inline constexpr int rabenseifner_fold = 160;            // pre-step of a P not a power of two
inline constexpr int rabenseifner_unfold = 161;          // its post-step
inline constexpr int rabenseifner_scatter_step = 162;    // + k: recursive halving, step k
inline constexpr int rabenseifner_gather_step = 194;     // + k: recursive doubling, step k
inline constexpr int ring_reduce_scatter = 230;          // the ring's first P-1 steps
inline constexpr int ring_allgather = 231;               // its last P-1 steps
inline constexpr int hypercube_scan_step = 240;          // + k: exchange k
inline constexpr int pairwise_reduce_scatter = 280;      // every step's block
inline constexpr int reduce_then_scatter_reduce = 290;   // the whole vector to member 0
inline constexpr int reduce_then_scatter_scatter = 291;  // each block to its owner
// The hybrid layer's left-fold chain (reproducibility shape_independent,
// src/hybrid/hybrid_execute.cpp): the fold so far from each process's leader
// to the next; a reduce's result from the last process to the root's.
inline constexpr int left_fold_chain = 300;
inline constexpr int left_fold_result = 301;
// execute_schedule callers (tests) may use any tag from here up to kTagBound.
inline constexpr int first_free = 1000;

// The tags above as ranges [first, first + count), checked to be disjoint
// and below kTagBound: a new tag goes into the table and this list.
struct TagRange {
  int first;
  int count;
};
inline constexpr TagRange kTagRanges[] = {
    {process_allgather, 1},
    {segment_name, 1},
    {segment_attached, 1},
    {segment_ready, 1},
    {binomial_reduce, 1},
    {binomial_forward, 1},
    {binomial_broadcast, 1},
    {recursive_doubling_fold, 1},
    {recursive_doubling_unfold, 1},
    {recursive_doubling_step, kStepTags},
    {rabenseifner_fold, 1},
    {rabenseifner_unfold, 1},
    {rabenseifner_scatter_step, kStepTags},
    {rabenseifner_gather_step, kStepTags},
    {ring_reduce_scatter, 1},
    {ring_allgather, 1},
    {hypercube_scan_step, kStepTags},
    {pairwise_reduce_scatter, 1},
    {reduce_then_scatter_reduce, 1},
    {reduce_then_scatter_scatter, 1},
    {left_fold_chain, 1},
    {left_fold_result, 1},
    {first_free, kTagBound - first_free},
};

constexpr bool tag_ranges_valid() {
  for (const TagRange& a : kTagRanges) {
    if (a.first < 0 || a.count < 1 || a.first + a.count > kTagBound) return false;
    for (const TagRange& b : kTagRanges) {
      if (&a != &b && a.first < b.first + b.count && b.first < a.first + a.count) return false;
    }
  }
  return true;
}
static_assert(tag_ranges_valid(), "two message tags overlap or one is out of MPI's range");

}  // namespace hreduce::detail::tags
