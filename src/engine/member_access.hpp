// What the MPI drop-in (src/mpi_dropin/) and the lone-member path reach
// inside a Member, kept out of the public hreduce/team.hpp: users' code has
// no business with a member's state or with calls already erased.
#pragma once

#include "hreduce/team.hpp"

namespace hreduce::detail {

// Runs an already erased call on `member` (the MPI drop-in library, whose
// element types are only known at run time); a null `call.options` means
// the team's defaults.
void execute_erased(Member& member, CallArgs call);
// The engine's state of `member` (the drop-in's lean path for small calls,
// src/hybrid/lone_member.hpp).
MemberState& state_of(Member& member);

// Member's friend: the two functions above reach its private parts here.
struct MemberAccess {
  static MemberState& state(Member& member) { return *member.state_; }
  static const CollectiveOptions& default_options(const Member& member) {
    return member.default_options();
  }
};

}  // namespace hreduce::detail
