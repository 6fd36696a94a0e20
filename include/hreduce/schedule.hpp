// Logical topologies: a reduction algorithm as a set of triples
// ⟨sender, step, receiver⟩ — "at time step `step`, `sender` sends its
// partial result to `receiver`" (docs/spec.md, "Algorithms").
//
// A valid schedule has one root (no successor); every other member has
// exactly one successor; time steps strictly increase along every path to the
// root. That is what makes the generic executor deadlock-free:
//
//   for each of my incoming steps t, in increasing order:
//       receive from every predecessor of step t, combine (see below)
//   if I am not the root: send my partial result to my successor
//
// Combine order. Within one step a member combines predecessors ranked above
// it first, in ascending rank, then those ranked below it, in descending rank
// ("nearest first"); a predecessor ranked below the member is the left
// operand. For a non-commutative op this yields exactly x_0 ∘ … ∘ x_{p-1}
// when every subtree covers a contiguous rank range, which validate() checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hreduce/topology.hpp"

namespace hreduce {

struct Transfer {
  int sender = 0;
  int step = 0;  // >= 1
  int receiver = 0;

  friend bool operator==(const Transfer&, const Transfer&) = default;
};

std::string to_string(const Transfer& transfer);  // "⟨3, 2, 1⟩" as "<3,2,1>"

class Schedule {
 public:
  // Members are 0..size-1. Construction only records the triples (it throws
  // only for size < 1); validate() says whether they form a reduction.
  Schedule(int size, int root, std::vector<Transfer> transfers, std::string name = {});

  int size() const { return size_; }
  int root() const { return root_; }
  const std::string& name() const { return name_; }
  const std::vector<Transfer>& transfers() const { return transfers_; }
  // Largest step used (0 for a single member).
  int steps() const;

  // Throws Error naming the offending triple(s) when: a member index or step
  // is out of range, a triple is repeated or sends to itself, the root sends,
  // a non-root member has no successor or two, the successors form a cycle,
  // steps do not strictly increase along a path, or (commutative == false)
  // some combine would not join adjacent rank ranges lowest-first.
  void validate(bool commutative = true) const;
  // validate() as a predicate.
  bool is_valid(bool commutative = true) const;

  // The member's successor triple (nullopt for the root).
  std::optional<Transfer> outgoing(int member) const;
  // The member's predecessors in executor combine order: increasing step,
  // and nearest first within a step (see the top of this file).
  std::vector<Transfer> incoming(int member) const;

  // One line per step: "step 1: 1->0 3->2" ...
  std::string describe() const;
  // Graphviz: members as nodes, triples as edges labelled with their step.
  std::string to_dot() const;

 private:
  int size_;
  int root_;
  std::vector<Transfer> transfers_;
  std::string name_;
};

// Generators, for any size p >= 1. A non-zero root rotates the member labels
// (virtual rank = (rank - root) mod p), which keeps the shape but not rank
// contiguity: for a non-commutative op use root 0 and forward the result.
namespace schedules {

// Every member sends to the root in step 1.
Schedule flat(int p, int root = 0);
// A line: members pass the partial result one hop at a time towards root.
Schedule chain(int p, int root = 0);
// Each subtree [lo, hi] is rooted at lo with two child subtrees splitting
// (lo, hi] in halves; contiguous for any p.
Schedule binary(int p, int root = 0);
// Binomial tree: in step s, virtual ranks that are odd multiples of 2^(s-1)
// send to the member 2^(s-1) below them; ceil(log2 p) steps.
Schedule binomial(int p, int root = 0);
// k-nomial tree (k >= 2): in step s, a virtual rank v with
// v mod k^s == j·k^(s-1), j in 1..k-1, sends to v - j·k^(s-1).
Schedule knomial(int p, int k, int root = 0);

// Topology-shaped tree: members (placed by `placement` on `topology`) are
// grouped by their container at each of `levels` (outermost first, e.g.
// {numa, l3, core}). Stage by stage from the innermost level outwards, the
// members of each group reduce to its leader along a k-nomial tree of radix
// `radix` over the group's members in rank order; the leaders then take part
// in the next level out, and a last stage joins the outermost groups'
// leaders. A group's leader is the root if the group holds it, else its
// lowest rank. With compact placement every group is a contiguous rank range,
// so the tree is also valid for non-commutative ops.
Schedule hierarchical(const Topology& topology, const Placement& placement,
                      const std::vector<Level>& levels, int root = 0, int radix = 2);

// The levels worth grouping by on this machine, outermost first: each of
// package, numa, l3, l2, core that has more than one object, fewer objects
// than PUs, and more objects than the level kept before it.
std::vector<Level> default_levels(const Topology& topology);

}  // namespace schedules
}  // namespace hreduce
