// Where a helper thread of the library may run.
#pragma once

#include <string>
#include <thread>

namespace hreduce::detail {

// Lets the calling thread run on every CPU of the process (the union of
// its threads' bindings: what mpirun gave it), not only on the PU of the
// pinned member that created it. A progress thread started by a pinned
// member otherwise shares that member's core even where others are idle,
// and overlaps nothing with a member that computes. False (nothing
// changed) where hwloc cannot tell or set it.
bool let_current_thread_use_process_cpus();

// Names a thread the library started (at most 15 characters are kept), so
// that `top -H`, `perf` and debuggers tell the library's threads apart
// from the application's: "hreduce m3" for member 3's worker, "hreduce
// queue" for a call queue's thread. Named by the thread that started it,
// so the name is there once the start returns.
void name_thread(std::thread& thread, const std::string& name);

}  // namespace hreduce::detail
