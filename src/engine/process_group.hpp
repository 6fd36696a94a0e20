// The engine's view of the other processes of a team that spans several
// (implemented in src/hybrid/, which depends on the engine, not the other
// way round).
#pragma once

#include <cstddef>
#include <string>

#include "hreduce/detail/call.hpp"

namespace hreduce::detail {

class MemberState;

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int processes() const = 0;
  virtual int members_here() const = 0;   // this process's members
  virtual int first_rank() const = 0;     // team rank of this process's member 0
  virtual int total_members() const = 0;  // over all processes

  // Runs one collective for member `me` of this process.
  virtual void execute(MemberState& me, const Call& call) = 0;
  // Which inter-process algorithm a collective would run, and why.
  virtual std::string explain(CollectiveKind kind, std::size_t bytes, bool commutative) const = 0;
};

}  // namespace hreduce::detail
