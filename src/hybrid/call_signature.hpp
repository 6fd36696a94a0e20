// What the processes of a team compare before a collective's data moves:
// a hash of the call that holds across processes (type identity by the
// mangled names, not by address). The hybrid steps (hybrid_execute.cpp)
// and the lean path of lone members (lone_member.hpp) must hash alike, as
// processes of one call may take either.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hreduce/team.hpp"

namespace hreduce::detail {

// `counts`: reduce_scatter's, one per member of the team (`members`), or
// null when this process's arguments are already known to be wrong.
std::uint64_t process_call_signature(CollectiveKind kind, std::size_t count, int root,
                                     const ErasedOp& op, Reproducibility level,
                                     const std::size_t* counts, int members);

}  // namespace hreduce::detail
