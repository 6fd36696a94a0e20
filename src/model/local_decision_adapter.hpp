// The one place the model asks how a process's members combine a call (the
// local path, the tree, the slices). Today it asks the engine's own
// predicates (src/engine/collectives.hpp: wants_tree, and the mailbox's
// size limit kMailboxBytes) and the engine's own tree builder
// (schedules::hierarchical over the machine's default levels); when the
// engine exposes decide_local / plan_tree / plan_slices as pure functions
// (src/engine/local_decision.hpp), this file alone changes. It holds no
// threshold of its own: every number comes from the engine or from the
// call's CollectiveOptions, whose defaults are the runtime's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hreduce/options.hpp"
#include "hreduce/schedule.hpp"
#include "hreduce/team.hpp"  // CollectiveKind
#include "hreduce/topology.hpp"

namespace hreduce::detail::model {

enum class LocalPath { mailbox, tree, sliced };
const char* to_string(LocalPath path);

struct LocalFacts {
  CollectiveKind kind = CollectiveKind::allreduce;
  std::size_t bytes_per_member = 0;
  std::size_t element_bytes = 8;
  bool may_throw = false;             // predefined ops never throw
  int members = 1;                    // of this process
  bool team_spans_processes = false;  // then the process's part is a step of src/hybrid
  CollectiveOptions options;          // the runtime's defaults unless set
};

struct LocalDecision {
  LocalPath path = LocalPath::sliced;
  std::string reason;
};

LocalDecision decide_local(const LocalFacts& facts);

// The reduction tree the engine builds for `members` placed on `pus` of
// `topology` (tree.cpp's call: the hierarchical tree over the machine's
// default levels, radix from the options).
Schedule plan_tree(const Topology& topology, const std::vector<int>& pus,
                   const CollectiveOptions& options);

// The slices themselves are not asked for: the engine's slice_of() is
// private to sliced.cpp until plan_slices() is public, and the model prices
// each member's slice as an equal share, which the engine's cache-line
// rounding changes by less than a line per member.

}  // namespace hreduce::detail::model
