// What members say when a call fails (call_failures.hpp). Every failure is
// a detail::Failure: its kind picks the public exception (throw_failure)
// and what the MPI drop-in reports, its text is for people.
#include "src/engine/call_failures.hpp"

#include <cstring>
#include <sstream>

#include "src/engine/call_checks.hpp"

namespace hreduce::detail {
namespace {

std::string options_text(const CollectiveOptions& o) {
  return message(to_string(o.algorithm), "/", to_string(o.tree), "/", o.radix, "/", o.chunk_bytes,
                 "/", o.tree_max_bytes, "/", o.tree_min_members, "/", to_string(o.reproducibility));
}

// Names the first field on which `other` differs from member 0. The level
// comes first: members asking for different ones run different steps (an
// exact sum's have other types and ops), which would be named instead.
// The kind: count_mismatch for the count or counts, root_mismatch for the
// root, mismatch for anything else.
Failure disagreement(const CallRecord& ref_record, const CallRecord& other_record, int rank,
                     int size) {
  const Descriptor& ref = ref_record.descriptor;
  const Descriptor& other = other_record.descriptor;
  std::ostringstream why;
  ErrorKind kind = ErrorKind::mismatch;
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
    kind = ErrorKind::count_mismatch;
    pair(uses_counts(ref.kind) ? "the number of counts" : "the element count", ref.count,
         other.count);
  } else if (ref.root != other.root) {
    kind = ErrorKind::root_mismatch;
    pair("the root", ref.root, other.root);
  } else if (!(ref.options == other.options)) {
    pair("the options (algorithm/tree/radix/chunk_bytes/tree_max_bytes/tree_min_members)",
         options_text(ref.options), options_text(other.options));
  } else {
    kind = ErrorKind::count_mismatch;
    for (int i = 0; i < size; ++i) {
      if (ref.counts[i] != other.counts[i]) {
        why << "members disagree on counts[" << i << "]: member 0 has " << ref.counts[i]
            << ", member " << rank << " has " << other.counts[i];
        break;
      }
    }
  }
  return Failure::of(kind, why.str());
}

// `more` after `into`'s text, "; " between; the kind of the first stays.
void append(Failure& into, const Failure& more) {
  if (!into) into = Failure::of(more.kind, {});
  into.text += (into.text.empty() ? "" : "; ") + more.text;
}

// What went wrong with this call's arguments or agreement (before the
// ending that says whether the team can go on).
Failure agreement_failure(const CallContext& ctx, bool relayed, bool any_invalid,
                          bool history_differs) {
  Failure failure;
  if (relayed) {
    // A failure from another process, already worded for the user.
    failure = ctx.team.failures_of(ctx.seq);
    failure.text = failure.text.substr(failure.text.find(": ") + 2);  // drop "member r: "
  } else if (any_invalid) {
    failure = ctx.team.failures_of(ctx.seq);
    failure.text = "invalid arguments: " + failure.text;
  } else {
    const CallRecord& first = *ctx.of(0).record;
    for (int r = 1; r < ctx.size(); ++r) {
      const CallRecord& theirs = *ctx.of(r).record;
      if (theirs.signature != first.signature) {
        append(failure, disagreement(first, theirs, r, ctx.size()));
      }
    }
  }
  if (history_differs) {
    append(failure, Failure::of(ErrorKind::mismatch,
                                "members disagreed in an earlier call that every member left "
                                "without waiting for all the others"));
  }
  return failure;
}

}  // namespace

Failure relayed_failure_of(const ProcessStep& step) {
  return step.relayed != nullptr ? *step.relayed : Failure::none();
}

void abandon_slots(MemberState& me) {
  for (Announcement& slot : me.control->announce) {
    slot.seq.store(kBrokenSeq, std::memory_order_release);
    private_futex_wake_all(slot.seq);  // wait_at_least blocks in futex(2)
  }
}

std::string call_label(const CallContext& ctx) {
  std::string label = to_string(reported_kind(ctx.call));
  label +=
      ctx.call.step == nullptr ? " (call " + std::to_string(ctx.seq) + ", member " : " (member ";
  return label + std::to_string(ctx.me.global_rank) + ")";
}

void fail_broken(MemberState& me, CollectiveKind kind) {
  abandon_slots(me);
  const Failure reason = me.team.broken_failure();
  throw_failure(Failure::of(when_broken(reason.kind),
                            broken_team_message(std::string(to_string(kind)) + ": member " +
                                                    std::to_string(me.global_rank),
                                                reason.text)));
}

void fail_agreement(const CallContext& ctx) {
  std::string ran_ahead;  // members that had returned before anyone checked
  bool any_invalid = false, relayed = false, history_differs = false;
  for (int r = 0; r < ctx.size(); ++r) {
    const Announcement& theirs = ctx.of(r);
    any_invalid |= theirs.invalid;
    relayed |= theirs.relayed;
    history_differs |= theirs.record->history_before != ctx.of(0).record->history_before;
    if (ctx.left_early(r)) ran_ahead += (ran_ahead.empty() ? "" : ", ") + std::to_string(r);
  }
  Failure failure = agreement_failure(ctx, relayed, any_invalid, history_differs);
  // Members that ran ahead cannot throw in this call, and the others cannot
  // tell how far they went: the team cannot go on in step.
  const bool in_step = ran_ahead.empty() && !history_differs;
  if (!ran_ahead.empty()) {
    failure.text += "; member(s) " + ran_ahead +
                    " had already returned from this call without waiting for every member";
  }
  if (!in_step) failure.text += "; " + std::string(kNoLongerUsable);
  // The message may read other members' counts arrays: nobody leaves (and
  // frees them) until everyone has built its message.
  ctx.finish_together("reporting the error");
  if (!relayed) failure.text = call_label(ctx) + ": " + failure.text;
  if (in_step) {
    // Every member is here and starts its history afresh, the same way.
    ctx.me.history = ctx.seq;
    throw_failure(failure);
  }
  ctx.team.break_team(failure);
  abandon_slots(ctx.me);
  throw_failure(Failure::of(when_broken(failure.kind), with_way_back(failure.text)));
}

void fail_timeout(const CallContext& ctx, const std::string& waited_for) {
  const std::string text = std::string(to_string(reported_kind(ctx.call))) + ": member " +
                           std::to_string(ctx.me.global_rank) + " timed out after " +
                           std::to_string(ctx.team.timeout.count()) + " ms waiting for " +
                           waited_for;
  ctx.team.break_team(Failure::of(ErrorKind::unusable, text));
  throw UnusableTeamError(with_way_back(text + "; " + std::string(kNoLongerUsable)));
}

}  // namespace hreduce::detail
