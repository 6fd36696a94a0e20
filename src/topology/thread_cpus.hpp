// Where a helper thread of the library may run.
#pragma once

namespace hreduce::detail {

// Lets the calling thread run on every CPU of the process (the union of
// its threads' bindings: what mpirun gave it), not only on the PU of the
// pinned member that created it. A progress thread started by a pinned
// member otherwise shares that member's core even where others are idle,
// and overlaps nothing with a member that computes. False (nothing
// changed) where hwloc cannot tell or set it.
bool let_current_thread_use_process_cpus();

}  // namespace hreduce::detail
