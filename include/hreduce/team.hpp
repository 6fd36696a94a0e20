// Teams of threads and their collectives (the intra-node phase).
//
//   hreduce::Team team;                       // one member per core, pinned
//   team.run([&](hreduce::Member& m) {        // persistent worker threads
//     m.allreduce(in, out, n, hreduce::op::sum);
//   });
//
//   #pragma omp parallel                      // or: threads you already have
//   { team.member(omp_get_thread_num()).allreduce(in, out, n, hreduce::op::sum); }
//
// Semantics are docs/spec.md's: team rank order for every rank-order rule, n = 0
// legal, in place by passing the same buffer as input and output, bitwise
// identical allreduce results on all members, the same bits run after run.
// Every member calls the same collectives in the same order with matching
// arguments; a mismatch or a bad argument on any member makes the call throw
// ArgumentError on every member, a user op that throws OpError, and the
// team stays usable. One exception: in a small reduce, scan or exscan,
// members that only contribute (not the root; member 0 of a scan) return
// without waiting for the others, as MPI's eager sends do, and a scan's
// other members but the last wait only for the members before them (see
// TeamOptions::run_ahead). If such a call fails, the members still in it
// throw, those that had left throw at their next call, and the team is
// unusable (UnusableTeamError). A member that never arrives makes the
// others throw UnusableTeamError after TeamOptions::timeout (off by
// default). docs/errors.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#define HREDUCE_PUBLIC_HEADER  // lets the detail headers in (they refuse direct includes)
#include "hreduce/detail/call.hpp"
#include "hreduce/error.hpp"
#include "hreduce/nonblocking.hpp"
#include "hreduce/ops.hpp"
#include "hreduce/options.hpp"
#include "hreduce/topology.hpp"

namespace hreduce {

class Team;
class Member;
struct TeamOptions;

namespace detail {
class TeamState;
class MemberState;
class Workers;
class ProcessGroup;
void execute(MemberState& member, const CallArgs& call);
// What of a Member the MPI drop-in reaches (src/engine/member_access.hpp).
struct MemberAccess;
// Builds a team spanning several processes (src/engine/team.cpp; used by
// make_mpi_team and the tests' in-memory process worlds).
Team team_over_processes(TeamOptions options, std::unique_ptr<ProcessGroup> group);
}  // namespace detail

struct TeamOptions {
  int members = 0;  // 0: one per core of the topology
  PlacementPolicy placement = PlacementPolicy::compact;
  // The machine to lay members on; nullopt: this machine. A synthetic or XML
  // topology shapes the trees and placement, but threads are not pinned.
  std::optional<Topology> topology;
  // Grouping levels of the hierarchical tree, outermost first; empty: the
  // machine's default_levels().
  std::vector<Level> levels;
  // Pin run()'s worker threads to their PUs (this machine only).
  bool bind = true;
  // Defaults for every call that passes no options of its own.
  CollectiveOptions collectives;
  // How long a member waits for another before throwing; zero: forever. The
  // environment variable HREDUCE_TIMEOUT_MS, when set, overrides this.
  std::chrono::milliseconds timeout{0};
  // In reduce, scan and exscan calls that go by mailbox (at most 512 bytes
  // per member, a predefined op, a team of one process below the tree
  // threshold: Team::local_path says "mailbox"), a member that only
  // contributes copies its input and returns without waiting, up to 7
  // calls ahead of the slowest member, so back-to-back calls overlap
  // instead of each waiting for a cross-core exchange; in a scan or exscan
  // the other members but the last wait only for the members before them
  // and leave likewise if those agree. An error in such a call reaches a
  // member that left only at its next call, and leaves the team unusable;
  // false: every call waits for every member, and errors are reported in
  // the call that caused them. Across the processes of a node
  // (make_mpi_team), processes that only contribute to a reduce or scan of
  // at most 512 bytes per process run ahead the same way (docs/mpi.md).
  bool run_ahead = true;
};

// One member of a team: its rank, and the collectives; their nonblocking
// (m.iallreduce) and persistent (m.allreduce_init) forms come from
// NonblockingForms (hreduce/nonblocking.hpp). A Member is used by one
// thread at a time.
class Member : public detail::NonblockingForms<Member> {
 public:
  // Team rank, ordered by (process rank, thread index): docs/spec.md's rank for
  // every rank-order rule.
  int rank() const;
  // Members of the whole team, over all processes.
  int size() const;
  // The PU this member is placed on (logical index in the team's topology).
  int pu() const;
  // Pins the calling thread to this member's PU (attach mode). Returns false,
  // with one warning per process, where pinning is not possible.
  bool pin() const;

  void barrier();

  // Every collective comes in three forms, each taking per-call options
  // last or not at all (then the team's TeamOptions::collectives):
  //   pointers and a count:  m.allreduce(in, out, n, op::sum)
  //   ranges:                m.allreduce(in, out, op::sum)
  //   in place, one range:   m.allreduce(inout, op::sum)
  // A range is anything contiguous and sized: std::vector, std::array, a
  // C array, std::span (const or not); its size is checked against what
  // the collective needs, and the input's size is the element count.
  // In the pointer form, in place means passing the same buffer twice.

  // --- reduce: member `root` receives x_0 ∘ … ∘ x_{p-1}; out is ignored
  //     (may be null or empty) on other members. In place: on the root only.
  template <class T, class Op>
  void reduce(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op, int root,
              detail::OptionsRef options = {}) {
    run<T>(op, detail::CollectiveKind::reduce, in, out, n, options, root);
  }
  template <detail::InputRange In, detail::OutputRangeOf<In> Out, class Op>
  void reduce(const In& in, Out&& out, const Op& op, int root, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::reduce, in, out, std::ranges::size(in), options, root);
  }
  template <detail::InOutRange InOut, class Op>
  void reduce(InOut&& inout, const Op& op, int root, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::reduce, inout, inout, std::ranges::size(inout), options,
               root);
  }

  // --- allreduce: every member receives x_0 ∘ … ∘ x_{p-1}, the same bits.
  template <class T, class Op>
  void allreduce(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op,
                 detail::OptionsRef options = {}) {
    run<T>(op, detail::CollectiveKind::allreduce, in, out, n, options);
  }
  template <detail::InputRange In, detail::OutputRangeOf<In> Out, class Op>
  void allreduce(const In& in, Out&& out, const Op& op, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::allreduce, in, out, std::ranges::size(in), options);
  }
  template <detail::InOutRange InOut, class Op>
  void allreduce(InOut&& inout, const Op& op, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::allreduce, inout, inout, std::ranges::size(inout),
               options);
  }

  // --- reduce_scatter: the reduced vector of Σ counts elements is cut into
  //     blocks; member r receives block r (counts[r] elements). `counts` has
  //     one entry per member. In place: the whole input in `out`, the block
  //     lands at its start.
  template <class T, class Op>
  void reduce_scatter(const T* in, std::type_identity_t<T>* out,
                      std::span<const std::size_t> counts, const Op& op,
                      detail::OptionsRef options = {}) {
    run<T>(op, detail::CollectiveKind::reduce_scatter, in, out, counts.size(), options, 0, SIZE_MAX,
           SIZE_MAX, counts.data());
  }
  template <detail::InputRange In, detail::OutputRangeOf<In> Out, class Op>
  void reduce_scatter(const In& in, Out&& out, std::span<const std::size_t> counts, const Op& op,
                      detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::reduce_scatter, in, out, counts.size(), options, 0,
               counts.data());
  }
  template <detail::InOutRange InOut, class Op>
  void reduce_scatter(InOut&& inout, std::span<const std::size_t> counts, const Op& op,
                      detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::reduce_scatter, inout, inout, counts.size(), options, 0,
               counts.data());
  }

  // --- reduce_scatter_block: reduce_scatter with every count equal to m;
  //     `in` holds m·size() elements, `out` m (in place: m·size()).
  template <class T, class Op>
  void reduce_scatter_block(const T* in, std::type_identity_t<T>* out, std::size_t m, const Op& op,
                            detail::OptionsRef options = {}) {
    run<T>(op, detail::CollectiveKind::reduce_scatter_block, in, out, m, options);
  }
  template <detail::InputRange In, detail::OutputRangeOf<In> Out, class Op>
  void reduce_scatter_block(const In& in, Out&& out, std::size_t m, const Op& op,
                            detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::reduce_scatter_block, in, out, m, options);
  }
  template <detail::InOutRange InOut, class Op>
  void reduce_scatter_block(InOut&& inout, std::size_t m, const Op& op,
                            detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::reduce_scatter_block, inout, inout, m, options);
  }

  // --- scan: member r receives x_0 ∘ … ∘ x_r.
  template <class T, class Op>
  void scan(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op,
            detail::OptionsRef options = {}) {
    run<T>(op, detail::CollectiveKind::scan, in, out, n, options);
  }
  template <detail::InputRange In, detail::OutputRangeOf<In> Out, class Op>
  void scan(const In& in, Out&& out, const Op& op, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::scan, in, out, std::ranges::size(in), options);
  }
  template <detail::InOutRange InOut, class Op>
  void scan(InOut&& inout, const Op& op, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::scan, inout, inout, std::ranges::size(inout), options);
  }

  // --- exscan: member r > 0 receives x_0 ∘ … ∘ x_{r-1}; member 0's output
  //     is left untouched (may be null or empty).
  template <class T, class Op>
  void exscan(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op,
              detail::OptionsRef options = {}) {
    run<T>(op, detail::CollectiveKind::exscan, in, out, n, options);
  }
  template <detail::InputRange In, detail::OutputRangeOf<In> Out, class Op>
  void exscan(const In& in, Out&& out, const Op& op, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::exscan, in, out, std::ranges::size(in), options);
  }
  template <detail::InOutRange InOut, class Op>
  void exscan(InOut&& inout, const Op& op, detail::OptionsRef options = {}) {
    run_ranges(op, detail::CollectiveKind::exscan, inout, inout, std::ranges::size(inout), options);
  }

 private:
  friend class Team;
  friend struct detail::MemberAccess;
  friend class detail::NonblockingForms<Member>;
  explicit Member(detail::MemberState* state) : state_(state) {}

  const CollectiveOptions& default_options() const;

  template <class T, class Op>
  void run(const Op& op, detail::CollectiveKind kind, const T* in, T* out, std::size_t count,
           detail::OptionsRef options, int root = 0, std::size_t in_size = SIZE_MAX,
           std::size_t out_size = SIZE_MAX, const std::size_t* counts = nullptr) {
    const detail::CallArgs call(kind, in, out, count, counts, in_size, out_size, root,
                                detail::erase_op<T>(op),
                                options.get() != nullptr ? *options.get() : default_options());
    detail::execute(*state_, call);
  }
  template <class Op, class In, class Out>
  void run_ranges(const Op& op, detail::CollectiveKind kind, const In& in, Out& out,
                  std::size_t count, detail::OptionsRef options, int root = 0,
                  const std::size_t* counts = nullptr) {
    run<std::ranges::range_value_t<In>>(op, kind, std::ranges::data(in), std::ranges::data(out),
                                        count, options, root, std::ranges::size(in),
                                        std::ranges::size(out), counts);
  }

  detail::MemberState* state_;
};

class Team {
 public:
  explicit Team(TeamOptions options = {});
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  // Movable between calls (into a std::unique_ptr, a std::vector, a member
  // assigned later); a moved-from team may only be destroyed or assigned.
  // Assigning over a team stops its worker threads first.
  Team(Team&& other) noexcept;
  Team& operator=(Team&& other) noexcept;

  // Members of the whole team, and of this process (they differ only for a
  // team spanning several processes).
  int size() const;
  int local_size() const;
  int processes() const;
  // False once the team broke (docs/errors.md): a member timed out or died,
  // or members fell out of step. Every call then throws UnusableTeamError;
  // an ArgumentError or OpError leaves the team usable.
  bool usable() const;
  // The way back after an UnusableTeamError whose members are all alive
  // (members fell out of step after a run-ahead call failed, or a member
  // timed out and came back): every process of the team calls it once,
  // from one thread, while none of its members is inside a call (after
  // Team::run returned, or once the attached threads caught their error).
  // The team is then usable again and starts counting calls afresh. A team
  // spanning several nodes, or processes of one node without shared memory,
  // cannot be resynchronised (UnusableTeamError): build a new one.
  void resynchronize();
  // Which algorithms a collective of this size would run, and why, and the
  // reproducibility level it delivers: with the team's default options, or
  // with `options` as a call would pass them.
  std::string explain(Collective collective, std::size_t bytes_per_member) const;
  std::string explain(Collective collective, std::size_t bytes_per_member,
                      const CollectiveOptions& options) const;
  // The shared-memory path inside each process alone: "mailbox", "tree" or
  // "sliced", for a predefined op with the team's default options (a user
  // op goes sliced where this says mailbox).
  std::string_view local_path(Collective collective, std::size_t bytes_per_member) const;
  // What such a call moves between this team's processes, in a few words,
  // from the same decisions a call makes: the node level's way ("inline",
  // "single copy" or "chunks"), then the message algorithm and over how many
  // nodes or processes (e.g. "chunks + rabenseifner over 4 nodes"; without
  // the node level, e.g. "recursive_doubling over 3 processes"), prefixed
  // "pipelined, " where a long allreduce overlaps its steps. Empty for a
  // team of one process. A call whose buffers overlap so that the single
  // copy cannot serve them takes the chunks. Where two processes pick
  // between the single copy and the inline way or the chunks by what each
  // took lately (docs/mpi.md), "inline (measured)", "chunks (measured)" or
  // "single copy (measured)": the way the next such call takes.
  // `bytes_per_member`: each
  // member's input (for reduce_scatter, the whole vector).
  std::string across_processes(Collective collective, std::size_t bytes_per_member) const;
  const Topology& topology() const;
  const Placement& placement() const;
  // The grouping levels of the hierarchical tree in use.
  const std::vector<Level>& levels() const;
  const TeamOptions& options() const;

  // Memory for n elements that every process of this team's node maps.
  // Collectives whose buffers lie in it skip the copy through the node's
  // staging buffers: the processes read each other's inputs and write each
  // other's outputs there. The way to full speed across processes.
  // Collective over the team's processes: each calls it once per
  // allocation, in the same order, outside any collective (sizes may
  // differ). The memory is zeroed and lives as long as the team. A team of
  // one process gets ordinary memory.
  template <class T>
  std::span<T> allocate(std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>, "Team::allocate: T must be trivially copyable");
    static_assert(alignof(T) <= 64, "Team::allocate: T's alignment exceeds 64 bytes");
    if (n > SIZE_MAX / sizeof(T)) {
      throw ArgumentError("Team::allocate: " + std::to_string(n) + " elements of " +
                          std::to_string(sizeof(T)) + " bytes overflow size_t");
    }
    return {static_cast<T*>(allocate_bytes(n * sizeof(T))), n};
  }
  void* allocate_bytes(std::size_t bytes);

  // Attach mode: the calling thread acts as this process's member `index`
  // (0 .. local_size()-1; its team rank is the process's first rank + index).
  Member& member(int index);

  // Runs fn(Member&) once on each of local_size() persistent worker threads
  // (started on first use, pinned when TeamOptions::bind) and waits for all.
  // If some members throw, the exception of the lowest-ranked one is
  // rethrown here after every member has returned.
  template <class F>
  void run(F&& fn) {
    auto invoke = [](void* context, Member& m) {
      (*static_cast<std::remove_reference_t<F>*>(context))(m);
    };
    run_erased(invoke, const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }

 private:
  // A team spanning several processes (hreduce/mpi.hpp builds one): this
  // process's members are the `options.members` given.
  Team(TeamOptions options, std::unique_ptr<detail::ProcessGroup> group);
  friend Team detail::team_over_processes(TeamOptions options,
                                          std::unique_ptr<detail::ProcessGroup> group);

  void run_erased(void (*invoke)(void*, Member&), void* context);

  std::unique_ptr<detail::TeamState> state_;
  std::unique_ptr<detail::Workers> workers_;  // stopped before state_ goes
  std::vector<Member> members_;
};

}  // namespace hreduce
