// The progress threads (HREDUCE_PROGRESS_THREAD=1, off by default). With
// them, a team of threads runs its nonblocking calls as teams over MPI
// always do: each member's calls in order, each as its blocking call, on a
// thread of the member's own (call_queue.hpp), or by the member itself when
// it waits first. A call then advances while its members compute, not only
// inside their test() and wait().
//
// When it pays: where a core is free while members compute (members wait
// on I/O or messages, or fewer members than cores). Where every core
// computes, the threads take time slices from the members, and a call ends
// no sooner than the members' own wait() would end it (docs/nonblocking.md
// has the figures).
#pragma once

namespace hreduce::detail {

// HREDUCE_PROGRESS_THREAD, read once per process.
bool progress_threads_wanted();

}  // namespace hreduce::detail
