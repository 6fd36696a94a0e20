// Where the memory a team works on belongs, as a pure function of the
// machine and of where the members sit: which member folds which slice of
// a sliced call, and so on which NUMA node each stretch of a vector is
// read and written.
//
// The sliced path cuts a vector into one slice per member (slice_of). In
// rank order, a scatter placement makes neighbouring slices alternate
// between NUMA nodes, and no stretch of a vector longer than one slice has
// a single node that folds it. Ordering the slices by NUMA node, then by
// rank, gives each node one contiguous run of the vector, which memory can
// follow page by page (Team::allocate, numa_spans below):
//
//   scatter, 8 members on "pack:2 numa:2 core:4": members 0…7 sit on
//   NUMA nodes 0 2 1 3 0 2 1 3
//
//   vector   │ slice 0  slice 1 │ slice 2  slice 3 │ slice 4  slice 5 │ slice 6  slice 7 │
//   folder   │ member 0 member 4│ member 2 member 6│ member 1 member 5│ member 3 member 7│
//   lives on │     NUMA node 0  │     NUMA node 1  │     NUMA node 2  │     NUMA node 3  │
//
// Under a compact placement members already sit in NUMA order, and the
// order is rank order. Whoever folds a slice, it folds x_0 ∘ … ∘ x_{p-1}
// element by element in rank order: the order moves memory, not arithmetic.
#pragma once

#include <cstddef>
#include <vector>

#include "hreduce/topology.hpp"
#include "src/topology/numa_memory.hpp"

namespace hreduce::detail {

struct NumaPlan {
  // The logical NUMA node of each member's PU (-1: the machine has none).
  // A member's working buffers (the tree's accumulator, the sliced path's
  // scratch, the exact sum's integers) are requested there.
  std::vector<int> numa_of_member;
  // Which slice, counted along the vector, member r folds, and back.
  std::vector<int> slice_of_member;
  std::vector<int> member_of_slice;

  int members() const { return static_cast<int>(numa_of_member.size()); }
  int numa_of_slice(int slice) const { return numa_of_member[member_of_slice[slice]]; }
};

// Slices by NUMA node of their folder, then by rank: a stable sort of the
// members on their node. Throws Error when the placement names a PU the
// topology lacks.
NumaPlan plan_numa(const Topology& topology, const Placement& placement);

// The NUMA node of a process's staging chunks in its node's segment: its
// leader's (member 0), which writes them while every process's folder reads
// them; -1 without members or NUMA nodes.
inline int staging_numa(const NumaPlan& plan) {
  return plan.members() > 0 ? plan.numa_of_member[0] : -1;
}

// Elements [lo, hi) of a vector of `count` elements cut as slice_of cuts it
// for plan.members() members, each run of slices folded on one NUMA node
// as one NumaRange (in bytes), in vector order; empty runs left out.
std::vector<NumaRange> numa_spans(const NumaPlan& plan, std::size_t count, std::size_t elem_size);

// The same for `bytes` of memory in whole pages of `page_bytes`: a page goes
// to the node that folds its first byte, so a page astride two nodes' runs
// is on one of them. With elements whose size divides a cache line, slices
// are cut at the same bytes whatever the element type (slice_granule), so
// one layout serves every type.
std::vector<NumaRange> page_spans(const NumaPlan& plan, std::size_t bytes, std::size_t page_bytes);

}  // namespace hreduce::detail
