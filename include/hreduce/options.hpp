// Tuning that travels as a value: per team (TeamOptions::collectives) or per
// call (the last argument of every collective). Every member of a call must
// pass equal options; the runtime checks that like any other argument.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hreduce {

// How a node's members combine.
//  - tree:   the members reduce up a tree (by default shaped by the machine:
//            core → cache → NUMA → package); parents read their children's
//            buffers directly. Few, short steps: best for short vectors.
//  - sliced: the vector is cut into one slice per member; each member reduces
//            its slice across all inputs in rank order and writes it straight
//            into the outputs. Every byte is read and written once: best for
//            long vectors. scan, exscan and reduce_scatter always use it.
//  - automatic: tree for teams of at least `tree_min_members` and vectors
//               of at most `tree_max_bytes` per member, sliced otherwise.
//               With few members the sliced algorithm's one round of
//               parallel reads beats the tree's chain of hops even for 8 B
//               (measured: docs/design.md, "Choosing the algorithm").
enum class Algorithm { automatic, tree, sliced };

// The tree used by Algorithm::tree.
enum class TreeShape { hierarchical, binomial, knomial, binary, flat, chain };

// What a call promises about the bits of its results (docs/spec.md,
// "Reproducibility"):
//  - run_to_run:        the same team shape, options and inputs give the
//                       same bits, on every member and in every run.
//  - shape_independent: for a fixed team size p, the bits do not depend on
//                       how members are laid out over processes, threads and
//                       nodes, nor on the algorithm's sizes and thresholds:
//                       every element is the left fold
//                       (((x_0 ∘ x_1) ∘ x_2) ∘ …) ∘ x_{p-1} in team rank order
//                       (scan and exscan: of the ranks up to q).
//  - exact:             op::sum on float, double and their complex forms
//                       only: the correctly rounded sum, whatever the order,
//                       the layout or the team size.
// A level a call cannot have is an ArgumentError, never a weaker level.
enum class Reproducibility { run_to_run, shape_independent, exact };

// The collectives, for Team::explain and Team::local_path.
enum class Collective { reduce, allreduce, reduce_scatter, reduce_scatter_block, scan, exscan };

std::string_view to_string(Collective collective);
std::optional<Collective> parse_collective(std::string_view name);
std::string_view to_string(Algorithm algorithm);
std::string_view to_string(TreeShape shape);
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::optional<TreeShape> parse_tree_shape(std::string_view name);
std::string_view to_string(Reproducibility level);
std::optional<Reproducibility> parse_reproducibility(std::string_view name);

struct CollectiveOptions {
  Algorithm algorithm = Algorithm::automatic;
  TreeShape tree = TreeShape::hierarchical;
  int radix = 2;  // fan-in of k-nomial trees (also inside hierarchical groups)
  // Working-set unit of the sliced algorithm: each member folds its slice
  // chunk by chunk through a buffer of this many bytes, kept in L1/L2.
  std::size_t chunk_bytes = 16 * 1024;
  // Largest vector (bytes per member) that automatic sends down the tree.
  std::size_t tree_max_bytes = 4 * 1024;
  // Smallest team that automatic sends down the tree.
  int tree_min_members = 8;
  Reproducibility reproducibility = Reproducibility::run_to_run;

  friend bool operator==(const CollectiveOptions&, const CollectiveOptions&) = default;
};

}  // namespace hreduce
