// Publishing a progress word without a fence on the fast path.
//
// A publisher stores the word, then reads how many waiters sleep in the
// kernel; a waiter counts itself among them, then rereads the word before it
// sleeps. Each side needs its write ordered before its read, or both could
// miss the other and the waiter would sleep through the publication. The
// fence the publisher pays for that on every operation waits for its store
// to leave the store buffer. For a line another core has just read, that is
// a round trip to that core. The publisher of a small node operation pays it
// on every call, while waiters only rarely go to sleep.
//
// membarrier(2) moves the cost to the rare side. A process that registered
// for MEMBARRIER_CMD_GLOBAL_EXPEDITED needs only a compiler barrier between
// its store and its read. A waiter about to sleep issues the command, which
// runs a full barrier on every CPU running a registered process before it
// returns. So either the publisher's read came after that barrier and sees
// the waiter counted, or its store was visible before the barrier ended and
// the waiter's reread sees it. This is the asymmetric fence of userspace RCU.
//
// The node level (src/node/shared_wait.hpp) and the members of a team of
// threads (wait.hpp, Waiting::light) both publish so. Inside one process
// the fence mattered most to a nonblocking call's start, which has nothing
// to do between its store and its look at the others: the member that came
// last waited there for its line to be taken back from the others' caches,
// then fetched theirs (16 cores, one of 2 members 1 µs late in every call:
// an 8-byte iallreduce + wait 1.39–1.51× the blocking call with the fence,
// 1.01–1.04× without).
#pragma once

namespace hreduce::detail {

// Registers this process, once; true where the kernel (and any seccomp
// policy) offers both the registration and the command. Processes of a node
// drop their fences only when all of them registered.
bool register_asymmetric_fence();

// Whether this process publishes without the fence: registered, and not
// turned off (HREDUCE_NODE_ASYMMETRIC_FENCE=off). Called as the library
// loads too (asymmetric_fence.cpp says why).
bool use_asymmetric_fence();

// The waiter's side: a full barrier on every CPU that runs a registered
// process. Only after register_asymmetric_fence() returned true.
void asymmetric_fence_heavy();

}  // namespace hreduce::detail
