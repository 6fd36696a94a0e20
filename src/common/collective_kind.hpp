// The collective kinds past the user's, which only the steps of a team
// spanning several processes run (src/engine/process_step.hpp). Here, not
// in the engine, because every kind's name (to_string, declared in
// hreduce/detail/call.hpp) knows them, and the node level names kinds in
// its messages without depending on the engine.
#pragma once

#include "hreduce/team.hpp"

namespace hreduce::detail {

// The internal steps travel in Call::kind as values past the user's
// collectives (the public enum lists only those).
// out[0, count) = root.in[offset, offset + count)
inline constexpr CollectiveKind kCopyFromRoot = static_cast<CollectiveKind>(64);
// out = root.in ∘ out, or a copy when copy_only
inline constexpr CollectiveKind kCombineFromRoot = static_cast<CollectiveKind>(65);
// chunked local reduce → on_chunk → copy, overlapped
inline constexpr CollectiveKind kPipelinedAllreduce = static_cast<CollectiveKind>(66);

}  // namespace hreduce::detail
