// The steps a team spanning several processes (src/hybrid/) runs inside
// each process, and what they add to a Call. The engine knows them only as
// "members, and where their data is": copy a piece of member 0's buffer,
// combine member 0's buffer into one's own, or reduce in chunks handed to
// a callback. Nothing here knows about MPI or the node level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hreduce/team.hpp"
#include "src/common/collective_kind.hpp"
#include "src/common/failure.hpp"

namespace hreduce::detail {

// Steps in which members legitimately pass different counts (each takes
// its own piece of the root's buffer).
inline bool is_internal(CollectiveKind kind) {
  return kind == kCopyFromRoot || kind == kCombineFromRoot;
}

// A call as the engine runs it: the user's arguments, and what only the
// steps of a team spanning processes add, behind a pointer (`step`) so that
// a user's call stays small (null there).
using Call = CallArgs;

// The parts of a call that only the steps of a team spanning processes set.
struct ProcessStep {
  // copy_from_root: where this member's piece starts in the root's buffer.
  std::size_t offset = 0;
  // combine_from_root: copy root.in instead of combining.
  bool copy_only = false;
  // scan / exscan: member 0 also receives x_0 ∘ … ∘ x_{p-1} here when set.
  void* total_out = nullptr;
  // Only the checks and the agreement: the process's one member hands its
  // own buffers to the node level, so nothing is copied here.
  bool checks_only = false;
  // The collective the user called, for messages (a step of it otherwise
  // names itself).
  const CollectiveKind* reported_as = nullptr;
  // A failure another process reported: every member throws it as is.
  const Failure* relayed = nullptr;
  // The reproducibility level the user's call asked for, where its steps
  // run at another (an exact sum's integer steps run at run_to_run), so
  // that members asking for different levels are told so.
  const Reproducibility* asked_level = nullptr;
  // pipelined_allreduce: elements per chunk, and what member 0 does with
  // each reduced chunk (in place in its output) before the others copy it.
  std::size_t chunk = 0;
  void (*on_chunk)(void* context, void* data, std::size_t count) = nullptr;
  void* on_chunk_context = nullptr;
};
inline constexpr ProcessStep kNoProcessStep{};

inline const ProcessStep& step_of(const Call& call) {
  return call.step != nullptr ? *call.step : kNoProcessStep;
}

}  // namespace hreduce::detail
