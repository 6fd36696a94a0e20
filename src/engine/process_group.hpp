// The engine's view of the other processes of a team that spans several
// (implemented by InterProcessGroup, src/hybrid/inter_process_group.hpp,
// which depends on the engine, not the other way round).
#pragma once

#include <cstddef>
#include <string>

#include "src/engine/process_step.hpp"

namespace hreduce::detail {

class MemberState;

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int processes() const = 0;
  virtual int members_here() const = 0;   // this process's members
  virtual int first_rank() const = 0;     // team rank of this process's member 0
  virtual int total_members() const = 0;  // over all processes
  // Members of the processes before this one on its machine (virtual
  // nodes included): where this process's members start among the
  // machine's PUs (0 with one process a machine).
  virtual int members_before_on_host() const { return 0; }
  // Collective over the processes (see Team::allocate): memory the other
  // processes of this node can read, or null where they share none.
  virtual void* allocate_shared(std::size_t /*bytes*/) { return nullptr; }
  // Where this process's members were placed, once, when the team is
  // built (collective over the processes): for explain().
  virtual void placed(const Topology& /*topology*/, const Placement& /*placement*/) {}

  // False once a process of this node marked the node broken (a run-ahead
  // failure, a process that died): Team::usable().
  virtual bool usable() const { return true; }
  // Team::resynchronize across the processes (collective): brings the
  // other processes' shared state back to its start, or throws
  // UnusableTeamError where that cannot be done.
  virtual void resynchronize() = 0;

  // Runs one collective for member `me` of this process.
  virtual void execute(MemberState& me, const Call& call) = 0;
  // Which inter-process algorithm a collective would run, and why.
  virtual std::string explain(CollectiveKind kind, std::size_t bytes, bool commutative) const = 0;
  // What such a call (a predefined op, separate buffers, the team's
  // options) moves between processes, in a few words (Team::across_processes).
  virtual std::string route(CollectiveKind kind, std::size_t bytes) const = 0;
  // Whether a shape_independent call needs the processes' chain (the usual
  // steps would bracket by process).
  virtual bool left_fold_by_chain() const { return true; }
};

}  // namespace hreduce::detail
