// The entry point of every shared-memory collective:
//
//   1. local checks    this member's own arguments (root range, null
//                      pointers, overlap, sizes); a failure is announced,
//                      not thrown, so every member learns of it
//   2. announce        descriptor + buffers into this member's slot
//   3. arrive barrier  wait until every member announced this call
//   4. agreement       compare every member's history of signatures with
//                      member 0's; any invalid or disagreeing member → Error
//                      everywhere, before any data moves
//   5. data phase      mailbox, tree or sliced, by the options and the size
//
// A member that only contributes to a small call returns after step 2,
// and one that needs only the members before it (a small scan's) after
// waiting for those (mailbox.hpp); the members that wait check their
// histories in this call, and a later call's history still shows a
// disagreement nobody waited for.
#include <cstring>

#include "hreduce/error.hpp"
#include "src/common/copy.hpp"
#include "src/common/failure.hpp"
#include "src/common/level_clock.hpp"
#include "src/engine/call_checks.hpp"
#include "src/engine/call_failures.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/exact_sum.hpp"
#include "src/engine/mailbox.hpp"
#include "src/engine/process_group.hpp"
#include "src/engine/process_step.hpp"

namespace hreduce::detail {

namespace {

// Kept out of arrive() so that the loop every call runs stays small.
[[noreturn, gnu::cold, gnu::noinline]] void fail_arrival(const CallContext& ctx, int upto) {
  std::string missing;
  for (int q = 0; q < upto; ++q) {
    if (ctx.of(q).seq.load(std::memory_order_acquire) < ctx.seq) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(q);
    }
  }
  fail_timeout(ctx, "members " + missing + " to arrive at call " + std::to_string(ctx.seq));
}

// The members in [r, upto) that have not arrived yet; charged to `waiting`
// (arrive() looks once first, off the clock).
[[gnu::noinline]] void wait_for_arrivals(const CallContext& ctx, int r, int upto) {
  LevelScope scope(CallLevel::waiting);
  for (; r < upto; ++r) {
    if (!wait_at_least(ctx.of(r).seq, ctx.seq, ctx.deadline, ctx.team.waiting)) {
      fail_arrival(ctx, upto);
    }
  }
}

// Waits until members [0, upto) have announced this call (or left a broken
// team: abandon_slots marks their slots done).
void wait_for_announcements(const CallContext& ctx, int upto) {
  for (int r = 0; r < upto; ++r) {
    if (ctx.of(r).seq.load(std::memory_order_acquire) < ctx.seq) {
      wait_for_arrivals(ctx, r, upto);
      break;
    }
  }
}

void arrive(const CallContext& ctx, int upto) {
  wait_for_announcements(ctx, upto);
  if (ctx.team.broken.load(std::memory_order_relaxed)) {
    fail_broken(ctx.me, reported_kind(ctx.call));
  }
}

// For a member that may leave after the members before it: those
// announced this call. Only a slot marked done by a member that left
// stops it here, not the team breaking meanwhile: the members that compare
// conclude from the announcements alone that it left (left_early), so it
// does, and learns of the break at its next call, as one that ran ahead.
void arrive_before(const CallContext& ctx, int upto) {
  wait_for_announcements(ctx, upto);
  for (int r = 0; r < upto; ++r) {
    if (ctx.of(r).seq.load(std::memory_order_relaxed) == kBrokenSeq) {
      fail_broken(ctx.me, reported_kind(ctx.call));
    }
  }
}

// The lines of `slot` that an input of `input_bytes` fills: its first line,
// and the payload's when the input does not fit the short payload.
// (__builtin_prefetch wants the read/write choice as a constant.)
template <int kForWriting>
void prefetch_slot(const Announcement& slot, std::size_t input_bytes) {
  __builtin_prefetch(&slot, kForWriting);
  if (input_bytes <= sizeof slot.short_payload) return;
  for (std::size_t line = 0; line < input_bytes; line += 64) {
    __builtin_prefetch(slot.payload + line, kForWriting);
  }
}

// A member among [0, upto) that left early has likely announced its next
// call already: fetching that slot now overlaps the transfer with this
// call's work, where the next call would wait for it. Sized for an input
// like this call's.
void prefetch_next_slots(const CallContext& ctx, std::size_t input_bytes, int upto) {
  const int next = static_cast<int>((ctx.seq + 1) % kSlots);
  for (int r = 0; r < upto; ++r) {
    if (ctx.of(r).leaving != Leaving::waits_for_all) {
      prefetch_slot<0>(ctx.controls[r].announce[next], input_bytes);
    }
  }
}

// The other members read this member's slot lines, so every write to them
// must first take the lines back (a read-for-ownership, one cross-core
// round trip). Asking for them now, once no one reads the next slot any
// more, overlaps that transfer with the rest of this call and whatever the
// caller does before the next one.
void prefetch_own_next_slot(const CallContext& ctx, std::size_t input_bytes) {
  if (ctx.seq + 1 >= ctx.me.everyone_reached + kSlots) return;
  prefetch_slot<1>(ctx.controls[ctx.me.rank].announce[(ctx.seq + 1) % kSlots], input_bytes);
}

// Before this call overwrites its slot, every other member must have left
// the call that slot held, kSlots calls ago. A member that waited for
// everyone in its previous call knows that already; one that ran ahead
// checks here. It first looks whether each other member has announced the
// previous call: then the next 6 calls need no check. Each look costs a
// cross-core transfer (the others have written those lines since), and a
// member that keeps running ahead would otherwise pay one every call.
// Waiting for a later call instead, so as to look less often, was no
// faster.
[[gnu::noinline]] void wait_for_slot(const CallContext& ctx) {
  const std::uint64_t target = ctx.seq - kSlots + 1;
  const std::uint64_t previous = ctx.seq - 1;
  std::uint64_t reached = previous;
  for (int r = 0; r < ctx.size(); ++r) {
    if (r == ctx.me.rank) continue;
    const auto& slots = ctx.controls[r].announce;
    if (slots[previous % kSlots].seq.load(std::memory_order_acquire) >= previous) continue;
    ctx.wait_for(slots[target % kSlots].seq, target, r,
                 "leaving the call whose slot this call reuses");
    reached = target;
  }
  if (ctx.team.broken.load(std::memory_order_relaxed)) {
    fail_broken(ctx.me, reported_kind(ctx.call));
  }
  ctx.me.everyone_reached = reached;
}

}  // namespace

void CallContext::wait_for(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
                           const char* what) const {
  if (word.load(std::memory_order_acquire) >= target) return;  // off the clock
  LevelScope scope(CallLevel::waiting);
  if (wait_at_least(word, target, deadline, team.waiting)) return;
  fail_timeout(*this,
               "member " + std::to_string(rank) + " (" + what + ") in call " + std::to_string(seq));
}

void CallContext::finish_together(const char* what) const {
  auto& mine = team.control(me.rank).done;
  announce(mine, seq);
  for (int r = 0; r < size(); ++r) {
    if (r != me.rank && !left_early(r)) wait_for(team.control(r).done, r, what);
  }
  wake_blocked(mine, team.waiting);  // why this late: see execute_local()
}

void CallContext::record_failure(const std::string& message) const {
  team.record_failure(seq, me.global_rank, Failure::of(ErrorKind::op, message));
  // Published before this member's own progress word, whose release store
  // carries it to every member that later acquires that word.
  team.error_seq.store(seq, std::memory_order_relaxed);
}

void CallContext::throw_if_failed() const {
  if (team.error_seq.load(std::memory_order_relaxed) != seq) return;
  throw OpError(call_label(*this) + ": the op threw: " + team.failures_of(seq).text);
}

void execute(MemberState& me, const CallArgs& args) {
  LevelScope scope(CallLevel::inside_process);
  const Call& call = args;
  if (call.options->reproducibility == Reproducibility::exact && exact_sum_applies(call.op))
      [[unlikely]] {
    execute_exact_sum(me, call);
    return;
  }
  execute_call(me, call);
}

void execute_call(MemberState& me, const Call& call) {
  // After this member's queued nonblocking calls started before it.
  if (me.queued_calls != nullptr && !me.queued_calls->idle()) [[unlikely]] {
    me.queued_calls->drain();
  }
  if (me.team.group) {
    me.team.group->execute(me, call);
  } else {
    execute_local(me, call);
  }
}

namespace {

// What a member decided while announcing its call.
struct Announced {
  std::size_t in_n = 0;      // elements of its input (0 for invalid arguments)
  std::size_t in_bytes = 0;  // ... in bytes
  LocalPath path = LocalPath::sliced;
  Leaving leaving = Leaving::waits_for_all;  // mailbox.hpp
};

// What decide_local() decides the path from, for this call.
LocalFacts local_facts(const Call& call, const TeamState& team, std::size_t input_bytes) {
  LocalFacts facts;
  facts.kind = call.kind;
  facts.bytes_per_member = input_bytes;
  facts.elem_size = call.op.elem_size;
  facts.op_may_throw = call.op.may_throw;
  facts.members_here = team.size();
  facts.members_in_team = team.total_members;
  facts.spans_processes = team.group != nullptr;
  facts.options = *call.options;
  return facts;
}

// Records why this member's call fails (its own arguments, or a failure it
// relays) for every member to report.
[[gnu::cold, gnu::noinline]] void record_problem(const CallContext& ctx, const ProcessStep& step,
                                                 const std::string& problem) {
  ctx.team.record_failure(
      ctx.seq, ctx.me.global_rank,
      problem.empty() ? relayed_failure_of(step) : Failure::of(ErrorKind::argument, problem));
}

// Steps 1 and 2: the local checks, the call's record and history, the
// path, and the announcement (with the input, by mailbox).
Announced announce_call(const CallContext& ctx) {
  MemberState& me = ctx.me;
  const Call& call = ctx.call;
  const int size = ctx.size();
  Announcement& mine = ctx.controls[me.rank].announce[ctx.slot];
  const ProcessStep& step = step_of(call);
  const bool relays = step.relayed != nullptr;
  const std::string problem =
      relays ? std::string() : local_problem(call, me.rank, size, me.team.options.collectives);
  const bool failed = relays || !problem.empty();
  if (failed) record_problem(ctx, step, problem);
  mine.invalid = failed;
  mine.relayed = relays;
  mine.in = call.in;
  mine.out = call.out;
  mine.total_out = step.total_out;
  CallRecord& record = me.records[ctx.slot];
  // reduce_scatter's counts may change behind an unchanged pointer.
  if (!record.described || uses_counts(call.kind) || !describes(record.descriptor, call)) {
    record.descriptor = describe(call);
    record.signature = signature_of(record.descriptor, size);
    record.described = true;
  }
  record.history_before = me.history;
  record.asked_level =
      step.asked_level != nullptr ? *step.asked_level : call.options->reproducibility;
  // Order matters (a multiply), and it costs two instructions: every call
  // runs it.
  me.history = me.history * 0x9E3779B97F4A7C15ull + record.signature;
  mine.history = me.history;
  Announced a;
  // 0 for invalid arguments, which cannot be measured (counts may be null)
  // and never go by mailbox.
  a.in_n = failed ? 0 : input_elements(call, size);
  a.in_bytes = a.in_n * call.op.elem_size;
  a.path = local_choice(local_facts(call, me.team, a.in_bytes)).path;
  const bool by_mailbox = a.path == LocalPath::mailbox;
  a.leaving = by_mailbox ? mailbox_leaving(call, me) : Leaving::waits_for_all;
  mine.leaving = a.leaving;
  if (by_mailbox) copy_bytes(mine.payload_for(a.in_bytes), call.in, a.in_bytes);
  announce(mine.seq, ctx.seq);
  return a;
}

// Step 4: every member's history must be member 0's, and nobody invalid.
void check_agreement(const CallContext& ctx, std::size_t in_bytes) {
  bool others_left_early = false;
  for (int r = 0; r < ctx.size(); ++r) {
    if (ctx.of(r).invalid || ctx.of(r).history != ctx.of(0).history) fail_agreement(ctx);
    others_left_early |= ctx.of(r).leaving != Leaving::waits_for_all;
  }
  if (others_left_early) prefetch_next_slots(ctx, in_bytes, ctx.size());
}

// Step 5.
void run_data_phase(const CallContext& ctx, const Announced& a) {
  const Call& call = ctx.call;
  if (call.kind == CollectiveKind::barrier || step_of(call).checks_only) return;
  if (!is_internal(call.kind) && a.in_n == 0) return;  // n = 0 only synchronises
  if (a.path == LocalPath::mailbox) return mailbox_collective(ctx, a.in_bytes);
  if (call.kind == kCopyFromRoot) return copy_from_root(ctx);
  if (call.kind == kCombineFromRoot) return combine_from_root(ctx);
  if (call.kind == kPipelinedAllreduce) return pipelined_allreduce(ctx);
  const bool tree = a.path == LocalPath::tree;
  switch (call.kind) {
    case CollectiveKind::reduce: tree ? tree_reduce(ctx) : sliced_reduce(ctx); break;
    case CollectiveKind::allreduce: tree ? tree_allreduce(ctx) : sliced_allreduce(ctx); break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block: sliced_reduce_scatter(ctx); break;
    case CollectiveKind::scan: sliced_scan(ctx, false); break;
    case CollectiveKind::exscan: sliced_scan(ctx, true); break;
    case CollectiveKind::barrier: break;
  }
}

}  // namespace

// Flattened: the steps above are one function's parts, and every call runs
// them.
[[gnu::flatten]] void execute_local(MemberState& me, const Call& call) {
  TeamState& team = me.team;
  if (team.broken.load(std::memory_order_relaxed)) fail_broken(me, reported_kind(call));
  const std::uint64_t seq = ++me.seq;
  const int slot = static_cast<int>(seq % kSlots);
  const CallContext ctx{me, team, call, seq, slot, Deadline::after(team.timeout)};
  if (seq >= me.everyone_reached + kSlots) wait_for_slot(ctx);

  const Announced a = announce_call(ctx);
  Announcement& mine = ctx.controls[me.rank].announce[slot];
  const auto leave_early = [&] {
    wake_blocked(mine.seq, team.waiting);
    prefetch_own_next_slot(ctx, a.in_bytes);
    ++me.calls_run_ahead;
    mailbox_collective(ctx, a.in_bytes);
  };
  if (a.leaving == Leaving::runs_ahead) return leave_early();
  if (a.leaving == Leaving::after_earlier) {
    arrive_before(ctx, me.rank);
    if (ctx.agree_before(me.rank + 1)) {
      prefetch_next_slots(ctx, a.in_bytes, me.rank);
      return leave_early();
    }
    // Not to be left early: every member concludes so alike (left_early)
    // and compares as though this one waited for all.
  }
  me.calls_run_ahead = 0;
  arrive(ctx, ctx.size());
  me.everyone_reached = seq;
  // Waking blocked waiters only now takes the fence off the critical path
  // (by now the store has long been visible), and it cannot deadlock: a member
  // blocked on our word is in this call's arrive, or ran ahead and waits
  // in a later call for this slot; either way it has already published
  // this call, so none of our waits needed it awake.
  wake_blocked(mine.seq, team.waiting);
  if (a.path == LocalPath::mailbox) prefetch_own_next_slot(ctx, a.in_bytes);
  check_agreement(ctx, a.in_bytes);
  run_data_phase(ctx, a);
}

}  // namespace hreduce::detail
