#include "src/engine/team_state.hpp"

#include <sched.h>
#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"
#include "src/common/asymmetric_fence.hpp"
#include "src/common/environment.hpp"
#include "src/engine/nonblocking/pending_calls.hpp"
#include "src/engine/process_group.hpp"

namespace hreduce::detail {
namespace {

std::atomic<std::uint64_t> pool_growths{0};

int default_member_count(const Topology& topology) {
  const int cores = topology.count(Level::core);
  return cores > 0 ? cores : topology.pu_count();
}

// Two members placed on one PU or, when threads are not pinned to their
// PUs, more members than the creating thread may run on: some member then
// waits while the one it waits for has no CPU. (Pinned threads are counted
// by placement alone: under `mpirun --bind-to core` the creating thread may
// run on one core while the members are pinned across the node.)
bool shares_cpus(const Placement& placement, bool pinned) {
  if (!pinned) {
    cpu_set_t allowed;
    const int cpus = sched_getaffinity(0, sizeof(allowed), &allowed) == 0
                         ? CPU_COUNT(&allowed)
                         : static_cast<int>(std::thread::hardware_concurrency());
    if (cpus > 0 && placement.members() > cpus) return true;
  }
  std::vector<int> pus = placement.pu_of_member;
  std::sort(pus.begin(), pus.end());
  return std::adjacent_find(pus.begin(), pus.end()) != pus.end();
}

// The members of a process that shares its node with others stay on the
// CPUs that process was given (mpirun --bind-to ...). A process given the
// whole machine (--bind-to none) starts where the members of the machine's
// earlier processes end: placed alike, every process would put its member
// 0 on PU 0, and the oversubscribed 8-process tests ran several times
// slower. The machine, not the node: four virtual nodes of four unbound
// processes each started at PU 0 on a 16-core machine, 16 processes on 4
// PUs, and a small call took 10 ms instead of 7 us.
std::vector<int> pus_for_group(const Topology& topology, const ProcessGroup& group) {
  std::vector<int> pus = process_pus(topology);
  if (static_cast<int>(pus.size()) == topology.pu_count()) {
    const auto shift = static_cast<std::ptrdiff_t>(
        static_cast<std::size_t>(group.members_before_on_host()) % pus.size());
    std::rotate(pus.begin(), pus.begin() + shift, pus.end());
  }
  return pus;
}

}  // namespace

std::string options_problem(const CollectiveOptions& o) {
  if (options_valid(o)) return {};
  if (o.algorithm != Algorithm::automatic && o.algorithm != Algorithm::tree &&
      o.algorithm != Algorithm::sliced) {
    return "options.algorithm is " + std::to_string(static_cast<int>(o.algorithm)) +
           ", not automatic, tree or sliced";
  }
  if (static_cast<unsigned>(o.tree) > static_cast<unsigned>(TreeShape::chain)) {
    return "options.tree is " + std::to_string(static_cast<int>(o.tree)) +
           ", not one of hierarchical, binomial, knomial, binary, flat, chain";
  }
  if (o.radix < 2) return "options.radix is " + std::to_string(o.radix) + ", expected >= 2";
  if (o.chunk_bytes < 1) return "options.chunk_bytes is 0, expected >= 1";
  if (static_cast<unsigned>(o.reproducibility) > static_cast<unsigned>(Reproducibility::exact)) {
    return "options.reproducibility is " + std::to_string(static_cast<int>(o.reproducibility)) +
           ", not run_to_run, shape_independent or exact";
  }
  return "options.tree_min_members is " + std::to_string(o.tree_min_members) + ", expected >= 1";
}

TeamState::~TeamState() {
  // The queues' threads run calls on the members and their process group:
  // they finish and stop while both are whole.
  for (auto& member : members) member->queued_calls.reset();
}

TeamState::TeamState(TeamOptions opts, std::unique_ptr<ProcessGroup> process_group)
    : options(std::move(opts)),
      topology(options.topology ? *options.topology : Topology::discover()),
      timeout(
          duration_from_environment("Team", "HREDUCE_TIMEOUT_MS", "milliseconds", options.timeout)),
      group(std::move(process_group)) {
  if (options.members < 0) {
    throw ArgumentError("Team: members must be >= 0 (0 = one per core), got " +
                        std::to_string(options.members));
  }
  if (const std::string problem = options_problem(options.collectives); !problem.empty()) {
    throw ArgumentError("Team: TeamOptions::collectives: " + problem);
  }
  const int p = options.members > 0 ? options.members : default_member_count(topology);
  placement = group ? place(topology, p, options.placement, pus_for_group(topology, *group))
                    : place(topology, p, options.placement);
  numa_plan = plan_numa(topology, placement);
  levels = options.levels.empty() ? schedules::default_levels(topology) : options.levels;
  int first_rank = 0;
  total_members = p;
  if (group) {
    if (group->members_here() != p) {
      throw ArgumentError("Team: this process contributes " + std::to_string(p) +
                          " members but the process layout says " +
                          std::to_string(group->members_here()));
    }
    first_rank = group->first_rank();
    total_members = group->total_members();
    group->placed(topology, placement);
  }
  // Long polling only where nobody else needs the CPUs: teams spanning
  // processes cannot see how many other processes share their cores (the
  // oversubscribed MPI tests took 3× longer with it).
  const bool members_share_cpus = shares_cpus(placement, options.bind && topology.is_this_system());
  if (members_share_cpus) {
    waiting.spins = kSpinsShared;
  } else if (!group) {
    waiting.keep_polling = kKeepPollingAlone;
  }
  waiting.keep_polling =
      duration_from_environment("Team", "HREDUCE_SPIN_US", "microseconds", waiting.keep_polling);
#if !defined(__SANITIZE_THREAD__)
  // Members with a CPU each rarely sleep, so the membarrier a sleeper then
  // issues costs less than a fence in every publication; members sharing
  // CPUs sleep in most waits.
  waiting.light = !members_share_cpus && use_asymmetric_fence();
#endif
  members_may_run_ahead = options.run_ahead && p > 1;
  controls_ = std::make_unique<MemberControl[]>(p);
  for (int r = 0; r < p; ++r) {
    const int pu = placement.pu_of_member[r];
    members.push_back(
        std::make_unique<MemberState>(*this, r, first_rank + r, pu, numa_plan.numa_of_member[r]));
    members.back()->control = &controls_[r];
    for (int s = 0; s < kSlots; ++s) {
      controls_[r].announce[s].record = &members.back()->records[s];
    }
  }
}

void TeamState::record_failure(std::uint64_t seq, int rank, Failure failure) {
  std::lock_guard lock(error_mutex_);
  // Members are at most kSlots - 1 calls apart (a member that ran ahead
  // may record a later call's error while others read this one's), so
  // older records are never read.
  const std::uint64_t oldest_read = seq > 2 * kSlots ? seq - 2 * kSlots : 0;
  failures_.erase(failures_.begin(), failures_.lower_bound({oldest_read, 0}));
  failures_.emplace(std::make_pair(seq, rank), std::move(failure));
}

Failure TeamState::failures_of(std::uint64_t seq) {
  std::lock_guard lock(error_mutex_);
  Failure all = Failure::none();
  for (auto it = failures_.lower_bound({seq, 0}); it != failures_.end() && it->first.first == seq;
       ++it) {
    const Failure& one = it->second;
    if (!all) all = Failure::of(one.kind, {});
    if (all.kind == ErrorKind::argument) all.kind = one.kind;
    all.text += (all.text.empty() ? "" : "; ") + std::string("member ") +
                std::to_string(it->first.second) + ": " + one.text;
  }
  return all;
}

void TeamState::break_team(Failure reason) {
  std::lock_guard lock(error_mutex_);
  if (!broken_reason_) broken_reason_ = std::move(reason);
  broken.store(true, std::memory_order_seq_cst);
}

void TeamState::restart() {
  for (int r = 0; r < size(); ++r) {
    MemberControl& control = controls_[r];
    for (Announcement& slot : control.announce) {
      slot.seq.store(0, std::memory_order_relaxed);
      slot.history = 0;
      slot.invalid = slot.relayed = false;
      slot.leaving = Leaving::waits_for_all;
    }
    control.partial_ready.store(0, std::memory_order_relaxed);
    control.done.store(0, std::memory_order_relaxed);
    control.chunks.store(0, std::memory_order_relaxed);
    MemberState& member = *members[r];
    member.seq = member.history = member.everyone_reached = 0;
    member.calls_run_ahead = 0;
    for (CallRecord& record : member.records) record = CallRecord{};
  }
  if (pending_calls) pending_calls->restart();
  std::lock_guard lock(error_mutex_);
  failures_.clear();
  broken_reason_ = Failure::none();
  error_seq.store(0, std::memory_order_relaxed);
  // Published by whatever hands the members to their threads next (the
  // start of Team::run, or the program's own synchronisation).
  broken.store(false, std::memory_order_seq_cst);
}

Failure TeamState::broken_failure() {
  std::lock_guard lock(error_mutex_);
  return broken_reason_;
}

std::uint64_t pool_growth_count() { return pool_growths.load(std::memory_order_relaxed); }

void* MemberState::scratch(int which, std::size_t bytes) {
  NumaBuffer& buffer = buffers_[which];
  if (buffer.size() < bytes) {
    // Grow geometrically so a slowly growing workload reallocates rarely.
    std::size_t size = buffer.size() ? buffer.size() : 4096;
    while (size < bytes) size *= 2;
    buffer = NumaBuffer(team.topology, size, numa);
    pool_growths.fetch_add(1, std::memory_order_relaxed);
  }
  return buffer.data();
}

}  // namespace hreduce::detail
