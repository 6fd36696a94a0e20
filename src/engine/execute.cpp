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
// A member that only contributes to a small call returns after step 2
// (mailbox.hpp); the members that wait check its history in this call, and
// a later call's history still shows a disagreement nobody waited for.
#include <cxxabi.h>
#include <algorithm>
#include <cstring>
#include <sstream>

#include "hreduce/error.hpp"
#include "src/common/copy.hpp"
#include "src/common/failure.hpp"
#include "src/common/hash.hpp"
#include "src/common/level_clock.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/exact_sum.hpp"
#include "src/engine/mailbox.hpp"
#include "src/engine/process_group.hpp"
#include "src/engine/process_step.hpp"

namespace hreduce::detail {

namespace {

std::string demangle(const std::type_info* type) {
  if (type == nullptr) return "none";
  int status = 0;
  char* name = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string text = status == 0 && name ? name : type->name();
  std::free(name);
  return text;
}

// A user op's function type, "main()::{lambda(int, int)#1}", out of
// "hreduce::UserOp<int, main()::{lambda(int, int)#1}>".
std::string function_type(const std::type_info* op_type) {
  const std::string text = demangle(op_type);
  constexpr std::string_view kUserOp = "hreduce::UserOp<";
  if (!text.starts_with(kUserOp) || !text.ends_with('>')) return text;
  int depth = 0;
  for (std::size_t i = kUserOp.size(); i < text.size(); ++i) {
    if (text[i] == '<' || text[i] == '(' || text[i] == '{') ++depth;
    if (text[i] == '>' || text[i] == ')' || text[i] == '}') --depth;
    if (depth == 0 && text.compare(i, 2, ", ") == 0) {
      return text.substr(i + 2, text.size() - i - 3);
    }
  }
  return text;
}

// What messages call this call: the user's collective, also in its steps.
CollectiveKind reported_kind(const Call& call) {
  const ProcessStep& step = step_of(call);
  return step.reported_as != nullptr ? *step.reported_as : call.kind;
}

bool uses_counts(CollectiveKind kind) { return kind == CollectiveKind::reduce_scatter; }

bool overlap_partially(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x != y && x < y + b_bytes && y < x + a_bytes;
}

// Builds an error message from pieces; only error paths call it.
template <class... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream text;
  (text << ... << parts);
  return text.str();
}

// Why this call cannot have the reproducibility level it asks for; empty
// when it can. Only calls asking for more than run_to_run come here.
[[gnu::cold, gnu::noinline]] std::string level_problem(const Call& call) {
  if (call.kind == CollectiveKind::barrier) return {};
  const CollectiveOptions& o = *call.options;
  if (o.reproducibility == Reproducibility::shape_independent && o.algorithm == Algorithm::tree) {
    return "options.reproducibility shape_independent cannot go with options.algorithm tree, "
           "whose bracketing follows the machine (use automatic or sliced)";
  }
  if (o.reproducibility == Reproducibility::exact && !exact_sum_applies(call.op)) {
    const std::string op = *call.op.op_name ? call.op.op_name : function_type(call.op.op_type);
    return message(
        "options.reproducibility exact is for op sum on float, double, "
        "std::complex<float> or std::complex<double>, not op ",
        op, " on ", demangle(call.op.type));
  }
  return {};
}

// This member's own argument errors; empty when fine. The fine path builds
// no strings: it runs on every call (inline: out of line, the call alone
// was a large share of a one-member call).
// `team_options`: the team's defaults, validated when it was built.
[[gnu::always_inline]] inline std::string local_problem(const Call& call, int rank, int size,
                                                        const CollectiveOptions& team_options) {
  if (call.step != nullptr && call.step->relayed_failure != nullptr) {
    return call.step->relayed_failure;
  }
  if (is_internal(call.kind)) return {};
  if (call.options != &team_options && !options_valid(*call.options)) {
    return options_problem(*call.options);
  }
  if (call.options->reproducibility != Reproducibility::run_to_run) [[unlikely]] {
    if (std::string why = level_problem(call); !why.empty()) return why;
  }
  if (call.kind == CollectiveKind::reduce && (call.root < 0 || call.root >= size)) {
    return message("root ", call.root, " is outside 0..", size - 1);
  }
  if (uses_counts(call.kind)) {
    if (call.count != static_cast<std::size_t>(size)) {
      return message("counts has ", call.count, " entries but the team has ", size, " members");
    }
    if (call.counts == nullptr) return "counts is a null pointer";
  }
  const std::size_t in_n = input_elements(call, size);
  const std::size_t out_n = output_elements(call, rank);
  const bool in_place = call.in == call.out;
  if (in_n > 0 && call.in == nullptr) {
    return message("in is a null pointer but holds ", in_n, " elements");
  }
  if (out_n > 0 && call.out == nullptr) {
    return message("out is a null pointer but must receive ", out_n, " elements");
  }
  if (call.in_size != SIZE_MAX && call.in_size < in_n) {
    return message("in has ", call.in_size, " elements but ", in_n, " are needed");
  }
  const std::size_t out_needed = in_place ? in_n : out_n;
  if (call.out_size != SIZE_MAX && call.out_size < out_needed) {
    return message(in_place ? "the in-place buffer" : "out", " has ", call.out_size,
                   " elements but ", out_needed, " are needed");
  }
  if (!in_place && call.out != nullptr &&
      overlap_partially(call.in, in_n * call.op.elem_size, call.out, out_n * call.op.elem_size)) {
    return "out partially overlaps in (pass the same pointer for in place)";
  }
  return {};
}

std::uint64_t signature_of(const Descriptor& d, int size) {
  // The small fields share words: fewer rounds on a path every call takes.
  const auto low = [](auto v, int bits) {
    return static_cast<std::uint64_t>(v) & ((std::uint64_t{1} << bits) - 1);
  };
  const auto root = static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.root));
  std::uint64_t h =
      mix(0, low(d.kind, 8) | low(d.options.algorithm, 8) << 8 | low(d.options.tree, 8) << 16 |
                 low(d.options.reproducibility, 8) << 24 | root << 32);
  h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.options.radix)) |
                 static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.options.tree_min_members))
                     << 32);
  if (!is_internal(d.kind)) h = mix(h, d.count);
  h = mix(h, d.elem_size);
  h = mix(h, reinterpret_cast<std::uintptr_t>(d.type));
  h = mix(h, reinterpret_cast<std::uintptr_t>(d.op_type));
  h = mix(h, d.options.chunk_bytes);
  h = mix(h, d.options.tree_max_bytes);
  if (uses_counts(d.kind) && d.counts != nullptr && d.count == static_cast<std::size_t>(size)) {
    for (std::size_t i = 0; i < d.count; ++i) h = mix(h, d.counts[i]);
  }
  return h;
}

std::string options_text(const CollectiveOptions& o) {
  return message(to_string(o.algorithm), "/", to_string(o.tree), "/", o.radix, "/", o.chunk_bytes,
                 "/", o.tree_max_bytes, "/", o.tree_min_members, "/", to_string(o.reproducibility));
}

// Names the first field on which `other` differs from member 0. The level
// comes first: members asking for different ones run different steps (an
// exact sum's have other types and ops), which would be named instead.
std::string disagreement(const CallRecord& ref_record, const CallRecord& other_record, int rank,
                         int size) {
  const Descriptor& ref = ref_record.descriptor;
  const Descriptor& other = other_record.descriptor;
  std::ostringstream why;
  auto pair = [&](const char* what, const auto& a, const auto& b) {
    why << "members disagree on " << what << ": member 0 has " << a << ", member " << rank
        << " has " << b;
  };
  if (ref_record.asked_level != other_record.asked_level) {
    pair("the reproducibility level", to_string(ref_record.asked_level),
         to_string(other_record.asked_level));
  } else if (ref.kind != other.kind) {
    why << "members called different collectives: member 0 called " << to_string(ref.kind)
        << ", member " << rank << " called " << to_string(other.kind);
  } else if (ref.type != other.type && *ref.type != *other.type) {
    pair("the element type", demangle(ref.type), demangle(other.type));
  } else if (ref.op_type != other.op_type && *ref.op_type != *other.op_type) {
    // Names tell ops apart unless two unnamed user ops differ: then their
    // functions' types, without the UserOp<T, …> around them.
    const bool same_name = std::strcmp(ref.op_name, other.op_name) == 0;
    pair("the op", ref.op_name + (same_name ? " (" + function_type(ref.op_type) + ")" : ""),
         other.op_name + (same_name ? " (" + function_type(other.op_type) + ")" : ""));
  } else if (ref.count != other.count) {
    pair(uses_counts(ref.kind) ? "the number of counts" : "the element count", ref.count,
         other.count);
  } else if (ref.root != other.root) {
    pair("the root", ref.root, other.root);
  } else if (!(ref.options == other.options)) {
    pair("the options (algorithm/tree/radix/chunk_bytes/tree_max_bytes/tree_min_members)",
         options_text(ref.options), options_text(other.options));
  } else {
    for (int i = 0; i < size; ++i) {
      if (ref.counts[i] != other.counts[i]) {
        why << "members disagree on counts[" << i << "]: member 0 has " << ref.counts[i]
            << ", member " << rank << " has " << other.counts[i];
        break;
      }
    }
  }
  return why.str();
}

// Wakes whoever waits for this member's later calls: the team broke, and
// they must throw instead of waiting for calls that will not come.
void abandon_slots(MemberState& me) {
  for (Announcement& slot : me.control->announce) {
    slot.seq.store(kBrokenSeq, std::memory_order_release);
    slot.seq.notify_all();
  }
}

// How messages name a call: the collective the user called, and the call
// number only where it is the user's (a step of a call spanning processes
// has an internal one).
std::string call_label(const CallContext& ctx) {
  std::string label = to_string(reported_kind(ctx.call));
  label +=
      ctx.call.step == nullptr ? " (call " + std::to_string(ctx.seq) + ", member " : " (member ";
  return label + std::to_string(ctx.me.global_rank) + ")";
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_broken(MemberState& me, CollectiveKind kind) {
  abandon_slots(me);
  throw_marked(broken_team_message(
                   std::string(to_string(kind)) + ": member " + std::to_string(me.global_rank),
                   me.team.broken_reason()),
               ErrorKind::unusable, true);
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_agreement(const CallContext& ctx) {
  const CallRecord& first = *ctx.of(0).record;
  std::string text;
  std::string ran_ahead;  // members that had returned before anyone checked
  bool any_invalid = false, relayed = false, history_differs = false;
  for (int r = 0; r < ctx.size(); ++r) {
    const Announcement& theirs = ctx.of(r);
    any_invalid |= theirs.invalid;
    relayed |= theirs.relayed;
    history_differs |= theirs.record->history_before != first.history_before;
    if (theirs.ran_ahead) ran_ahead += (ran_ahead.empty() ? "" : ", ") + std::to_string(r);
  }
  if (relayed) {
    // A failure from another process, already worded for the user.
    for (int r = 0; r < ctx.size() && text.empty(); ++r) {
      if (ctx.of(r).relayed) text = ctx.team.errors_of(ctx.seq);
    }
    text = text.substr(text.find(": ") + 2);  // drop the local "member r: " prefix
  } else if (any_invalid) {
    text = "invalid arguments: " + ctx.team.errors_of(ctx.seq);
  } else {
    for (int r = 1; r < ctx.size(); ++r) {
      const CallRecord& theirs = *ctx.of(r).record;
      if (theirs.signature != first.signature) {
        text += (text.empty() ? "" : "; ") + disagreement(first, theirs, r, ctx.size());
      }
    }
  }
  if (history_differs) {
    text += (text.empty() ? "" : "; ") +
            std::string(
                "members disagreed in an earlier call that every member left without "
                "waiting for the others (each only contributed to it)");
  }
  // Members that ran ahead cannot throw in this call, and the others cannot
  // tell how far they went: the team cannot go on in step.
  const bool in_step = ran_ahead.empty() && !history_differs;
  if (!ran_ahead.empty()) {
    text += "; member(s) " + ran_ahead +
            " had already returned from this call, having only contributed to it";
  }
  if (!in_step) text += "; " + std::string(kNoLongerUsable);
  // The message may read other members' counts arrays: nobody leaves (and
  // frees them) until everyone has built its message.
  ctx.finish_together("reporting the error");
  if (!relayed) {
    text = call_label(ctx) + ": " + text;
  }
  if (in_step) {
    // Every member is here and starts its history afresh, the same way.
    ctx.me.history = ctx.seq;
    throw_marked(text, ErrorKind::argument);
  }
  ctx.team.break_team(text);
  abandon_slots(ctx.me);
  throw_marked(with_way_back(text), ErrorKind::argument, true);
}

// A wait ran past the team's timeout: members are no longer in step.
[[noreturn, gnu::cold, gnu::noinline]] void fail_timeout(const CallContext& ctx,
                                                         const std::string& waited_for) {
  const std::string text = std::string(to_string(reported_kind(ctx.call))) + ": member " +
                           std::to_string(ctx.me.global_rank) + " timed out after " +
                           std::to_string(ctx.team.timeout.count()) + " ms waiting for " +
                           waited_for;
  ctx.team.break_team(text);
  throw UnusableTeamError(with_way_back(text + "; " + std::string(kNoLongerUsable)));
}

// Kept out of arrive() so that the loop every call runs stays small.
[[noreturn, gnu::cold, gnu::noinline]] void fail_arrival(const CallContext& ctx) {
  std::string missing;
  for (int q = 0; q < ctx.size(); ++q) {
    if (ctx.of(q).seq.load(std::memory_order_acquire) < ctx.seq) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(q);
    }
  }
  fail_timeout(ctx, "members " + missing + " to arrive at call " + std::to_string(ctx.seq));
}

void arrive(const CallContext& ctx) {
  LevelScope scope(CallLevel::waiting);
  const int size = ctx.size();
  for (int r = 0; r < size; ++r) {
    if (!wait_at_least(ctx.of(r).seq, ctx.seq, ctx.deadline, ctx.team.waiting)) fail_arrival(ctx);
  }
  // A member that left a broken team marks its slots done (abandon_slots).
  if (ctx.team.broken.load(std::memory_order_relaxed)) {
    fail_broken(ctx.me, reported_kind(ctx.call));
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

// A member that ran ahead has likely announced its next call already:
// fetching that slot now overlaps the transfer with this call's work, where
// the next call would wait for it. Sized for an input like this call's.
void prefetch_next_slots(const CallContext& ctx, std::size_t input_bytes) {
  const int next = static_cast<int>((ctx.seq + 1) % kSlots);
  for (int r = 0; r < ctx.size(); ++r) {
    if (ctx.of(r).ran_ahead) prefetch_slot<0>(ctx.controls[r].announce[next], input_bytes);
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
  LevelScope scope(CallLevel::waiting);
  if (wait_at_least(word, target, deadline, team.waiting)) return;
  fail_timeout(*this,
               "member " + std::to_string(rank) + " (" + what + ") in call " + std::to_string(seq));
}

void CallContext::finish_together(const char* what) const {
  auto& mine = team.control(me.rank).done;
  announce(mine, seq);
  for (int r = 0; r < size(); ++r) {
    if (r != me.rank && !of(r).ran_ahead) wait_for(team.control(r).done, r, what);
  }
  wake_blocked(mine, team.waiting);  // why this late: see execute_local()
}

void CallContext::record_failure(const std::string& message) const {
  team.record_error(seq, me.global_rank, message);
  // Published before this member's own progress word, whose release store
  // carries it to every member that later acquires that word.
  team.error_seq.store(seq, std::memory_order_relaxed);
}

void CallContext::throw_if_failed() const {
  if (team.error_seq.load(std::memory_order_relaxed) != seq) return;
  throw OpError(call_label(*this) + ": the op threw: " + team.errors_of(seq));
}

std::string member_problem(const Call& call, int rank, int size,
                           const CollectiveOptions& team_options) {
  return local_problem(call, rank, size, team_options);
}

void execute(MemberState& me, const CallArgs& args) {
  LevelScope scope(CallLevel::inside_process);
  const Call call(args);
  if (call.options->reproducibility == Reproducibility::exact && exact_sum_applies(call.op))
      [[unlikely]] {
    execute_exact_sum(me, call);
    return;
  }
  execute_call(me, call);
}

void execute_call(MemberState& me, const Call& call) {
  if (me.team.group) {
    me.team.group->execute(me, call);
  } else {
    execute_local(me, call);
  }
}

[[gnu::flatten]] void execute_local(MemberState& me, const Call& call) {
  TeamState& team = me.team;
  if (team.broken.load(std::memory_order_relaxed)) fail_broken(me, reported_kind(call));
  const std::uint64_t seq = ++me.seq;
  const int slot = static_cast<int>(seq % kSlots);
  const CallContext ctx{me, team, call, seq, slot, Deadline::after(team.timeout)};
  if (seq >= me.everyone_reached + kSlots) wait_for_slot(ctx);

  const int size = ctx.size();
  Announcement& mine = ctx.controls[me.rank].announce[slot];
  const std::string problem = local_problem(call, me.rank, size, team.options.collectives);
  if (!problem.empty()) team.record_error(seq, me.global_rank, problem);
  mine.invalid = !problem.empty();
  const ProcessStep& step = step_of(call);
  mine.relayed = step.relayed_failure != nullptr;
  mine.in = call.in;
  mine.out = call.out;
  mine.total_out = step.total_out;
  CallRecord& record = me.records[slot];
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
  // 0 for invalid arguments, which cannot be measured (counts may be null)
  // and never go by mailbox.
  const std::size_t in_n = problem.empty() ? input_elements(call, size) : 0;
  const std::size_t in_bytes = in_n * call.op.elem_size;
  const bool by_mailbox = wants_mailbox(call, team, in_bytes);
  const bool runs_ahead = by_mailbox && may_run_ahead(call, me);
  mine.ran_ahead = runs_ahead;
  if (by_mailbox) copy_bytes(mine.payload_for(in_bytes), call.in, in_bytes);
  announce(mine.seq, seq);
  if (runs_ahead) {
    wake_blocked(mine.seq, team.waiting);
    prefetch_own_next_slot(ctx, in_bytes);
    ++me.calls_run_ahead;
    mailbox_collective(ctx, in_bytes);
    return;
  }
  me.calls_run_ahead = 0;
  arrive(ctx);
  me.everyone_reached = seq;
  // Waking blocked waiters only now takes the fence off the critical path
  // (by now the store has long been visible), and it cannot deadlock: a member
  // blocked on our word is in this call's arrive, or ran ahead and waits
  // in a later call for this slot; either way it has already published
  // this call, so none of our waits needed it awake.
  wake_blocked(mine.seq, team.waiting);
  if (by_mailbox) prefetch_own_next_slot(ctx, in_bytes);
  bool others_ran_ahead = false;
  for (int r = 0; r < size; ++r) {
    if (ctx.of(r).invalid || ctx.of(r).history != ctx.of(0).history) fail_agreement(ctx);
    others_ran_ahead |= ctx.of(r).ran_ahead;
  }
  if (others_ran_ahead) prefetch_next_slots(ctx, in_bytes);

  if (call.kind == CollectiveKind::barrier || step.checks_only) return;
  if (!is_internal(call.kind) && in_n == 0) return;  // n = 0 only synchronises
  if (by_mailbox) {
    mailbox_collective(ctx, in_bytes);
    return;
  }
  if (call.kind == kCopyFromRoot) return copy_from_root(ctx);
  if (call.kind == kCombineFromRoot) return combine_from_root(ctx);
  if (call.kind == kPipelinedAllreduce) return pipelined_allreduce(ctx);
  switch (call.kind) {
    case CollectiveKind::reduce:
      wants_tree(call, size) ? tree_reduce(ctx) : sliced_reduce(ctx);
      break;
    case CollectiveKind::allreduce:
      wants_tree(call, size) ? tree_allreduce(ctx) : sliced_allreduce(ctx);
      break;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block: sliced_reduce_scatter(ctx); break;
    case CollectiveKind::scan: sliced_scan(ctx, false); break;
    case CollectiveKind::exscan: sliced_scan(ctx, true); break;
    case CollectiveKind::barrier: break;
  }
}

}  // namespace hreduce::detail
