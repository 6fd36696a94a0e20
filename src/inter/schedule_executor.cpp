// The generic executor: any reduction schedule (a set of triples ⟨p, t, q⟩,
// "at step t, p sends its partial result to q"; see hreduce/schedule.hpp)
// run over a Channel. Every member does the same:
//
//   for each predecessor, in increasing step and nearest first:
//       receive its partial result into a temporary
//       combine: buf = tmp ∘ buf if the sender ranks below me, else buf ∘ tmp
//   if I have a successor: send buf to it
//
//   binomial tree, P = 6     step 1   step 2   step 3
//     member 0 (root)        ← 1      ← 2      ← 4
//     member 1               → 0
//     member 2               ← 3      → 0
//     member 3               → 2
//     member 4               ← 5               → 0
//     member 5               → 4
//
// Steps strictly increase towards the root, so every receive is matched by a
// send that does not itself wait for anything later: no deadlock, even with
// blocking (synchronous) sends. When every subtree covers a contiguous rank
// range (Schedule::validate(false) checks this), the root holds exactly
// x_0 ∘ … ∘ x_{P-1}.
//
// The predecessors are walked in Schedule::incoming's order, but picked by a
// scan over the triples instead of asking incoming() for a sorted vector, so
// a call allocates nothing.
#include <map>
#include <string>
#include <tuple>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

namespace {

// Schedule::incoming's order: increasing step; within a step senders above
// the member ascending, then senders below descending.
std::tuple<int, int, int> incoming_key(const Transfer& t, int member) {
  const bool above = t.sender > member;
  return {t.step, above ? 0 : 1, above ? t.sender : -t.sender};
}

// The member's next predecessor after `previous` (nullptr: the first one),
// or nullptr when there is none left. Keys are distinct: a sender has one
// successor.
const Transfer* next_incoming(const Schedule& schedule, int member, const Transfer* previous) {
  const Transfer* next = nullptr;
  for (const Transfer& t : schedule.transfers()) {
    if (t.receiver != member) continue;
    const auto key = incoming_key(t, member);
    if (previous != nullptr && !(incoming_key(*previous, member) < key)) continue;
    if (next == nullptr || key < incoming_key(*next, member)) next = &t;
  }
  return next;
}

}  // namespace

void execute_schedule(Channel& channel, const Schedule& schedule, void* buf, std::size_t n,
                      const ErasedOp& op, Workspace& workspace, int tag) {
  if (schedule.size() != channel.size()) {
    throw ArgumentError("execute_schedule: the schedule has " + std::to_string(schedule.size()) +
                        " members but the channel has " + std::to_string(channel.size()));
  }
  const int me = channel.rank();
  const std::size_t bytes = n * op.elem_size;
  void* tmp = workspace.get(kSlotReceive, bytes);

  for (const Transfer* t = next_incoming(schedule, me, nullptr); t != nullptr;
       t = next_incoming(schedule, me, t)) {
    channel.recv(t->sender, tmp, bytes, tag);
    if (n == 0) continue;
    if (t->sender < me) {
      op.apply(tmp, buf, buf, n);  // the sender's range lies below mine
    } else {
      op.apply(buf, tmp, buf, n);
    }
  }
  for (const Transfer& t : schedule.transfers()) {
    if (t.sender == me) {
      channel.send(t.receiver, buf, bytes, tag);
      break;  // one successor
    }
  }
}

const Schedule& cached_binomial_schedule(int P) {
  // Per thread (a channel is driven by one thread per participant), so no
  // lock; keyed by P because one thread may drive channels of several sizes
  // (a node's processes, then the node leaders). Map nodes never move.
  thread_local std::map<int, Schedule> cache;
  auto it = cache.find(P);
  if (it == cache.end()) it = cache.emplace(P, schedules::binomial(P, 0)).first;
  return it->second;
}

}  // namespace hreduce::detail::inter
