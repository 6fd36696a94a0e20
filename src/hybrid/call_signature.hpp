// What the processes of a team compare before a collective's data moves:
// a hash of the call that holds across processes (type identity by the
// mangled names, not by address). Every process announces its call
// through this one function, whichever way it takes (the hybrid steps, or
// the lone-member path from the team or the drop-in), so processes of one
// call that take different ways still compare alike.
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
