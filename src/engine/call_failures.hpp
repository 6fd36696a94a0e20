// What members say when a call fails, as detail::Failure values: members
// that disagree (the agreement check of execute.cpp), a team that broke
// earlier, a wait that ran past the timeout. Cold paths, out of line.
#pragma once

#include <string>

#include "src/common/failure.hpp"
#include "src/engine/collectives.hpp"

namespace hreduce::detail {

// What messages call this call: the user's collective, also in its steps.
inline CollectiveKind reported_kind(const Call& call) {
  const ProcessStep& step = step_of(call);
  return step.reported_as != nullptr ? *step.reported_as : call.kind;
}

// The failure another process reported, which this member relays.
Failure relayed_failure_of(const ProcessStep& step);

// Wakes whoever waits for this member's later calls: the team broke, and
// they must throw instead of waiting for calls that will not come.
void abandon_slots(MemberState& me);

// The team broke earlier: this call throws why.
[[noreturn, gnu::cold, gnu::noinline]] void fail_broken(MemberState& me, CollectiveKind kind);
// Some member's arguments are invalid, it relays a failure, or members
// disagree on the call (now or in a call nobody waited in): every member
// throws the same.
[[noreturn, gnu::cold, gnu::noinline]] void fail_agreement(const CallContext& ctx);
// A wait ran past the team's timeout: members are no longer in step.
[[noreturn, gnu::cold, gnu::noinline]] void fail_timeout(const CallContext& ctx,
                                                         const std::string& waited_for);
// How messages name a call: the collective, and the call number only
// where it is the user's.
std::string call_label(const CallContext& ctx);

}  // namespace hreduce::detail
