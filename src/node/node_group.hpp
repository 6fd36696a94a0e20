// The node level: the processes of one node combine through one shared
// segment instead of messages. Each process takes part through one thread
// (its leader, member 0), after its own members have combined in place
// through the shared-memory engine; see src/hybrid/hybrid_execute.cpp.
//
// One node operation, P processes, the segment laid out as
//
//   header │ process 0 │ … │ process P-1 │ stage[P][B][C] │ result[B][C]
//            kNodeSlots announcement slots, the progress words staged, folded,
//            drained (each on its own 128-byte line), the fold's failure
//
//   announce   signature, arguments and any failure into the slot of this
//              operation (op number mod kNodeSlots); inputs of at most
//              inline_bytes() travel in the slot itself. Then wait for
//              every process's slot. Before writing slot k, a process makes
//              sure every other has announced k - kNodeSlots + 1, that is,
//              finished reading the slot's previous operation.
//   agree      any failure or signature that differs from process 0's
//              ends the operation on every process with the same text.
//   run ahead  a process that only contributes to a small reduction (a
//              reduce's non-root, the first process of a scan or exscan)
//              announces its input and returns without waiting, as an MPI
//              eager send does: at most kNodeSlots - 2 operations past the
//              last one that some process waited in and compared (each
//              publishes that operation's number; a reduce's root compares
//              every time), else it waits once and compares. Nobody can
//              tell it about a failure of such an operation in time, so the
//              processes that did wait mark the node broken (the team is
//              then unusable, as inside one process: docs/api.md) and it
//              learns so at its next operation. Every slot carries a digest of its process's
//              earlier signatures, so operations that every process left
//              without waiting are still compared, one wait later.
//   small      each process folds the slots it needs, in rank order.
//   chunked    the vector goes through in chunks of C bytes, in a ring of
//              B buffers (s = step mod B; B = buffers(), 2 to 8):
//
//     step t:  stage    copy my chunk into stage[me][s], but for my
//                       slice                                → staged = t
//              fold     my slice of the chunk, across stage[0..P-1][s]
//                       (mine from my input) in rank order,
//                       into result[s]                       → folded = t
//              drain    copy the parts of result[s] I receive (and, for
//                       scan, my exclusive prefix that the fold left in
//                       stage[me][s])                        → drained = t
//
//     Before staging step t a process waits until every process folded
//     t-B (nobody reads stage[me][s] any more); before folding, until
//     every process drained t-B (nobody reads result[s]). Steps count over
//     all operations, the same on every process.
//
//     The ring is as long as 32 MiB allow: a buffer is written again only
//     after the other processes' cores have read several chunks since, so
//     its lines have mostly left their caches, and writing them costs no
//     round trip to those cores to take them back.
//
//   single     (two processes, from kNodeSingleCopyBytes and above
//   copy       inline_bytes(kind)) the vector is cut in two, and process q
//              computes every result over its part: it reads the other's
//              input and writes the other's output straight in its memory
//              (process_vm_readv/writev, cross_memory.hpp), in pieces of a
//              chunk, folding in rank order; then it says `released` and
//              waits for the other's. Each byte moves once. An exscan's
//              copy and an allreduce's fold are cut in halves; a fold to
//              a single receiver goes all to it below
//              kNodeSplitFoldBytes, and 3/5 of it from there (4/5 when the
//              other also copies its input to its own scan prefix), plus
//              kNodeSplitFoldExtraBytes. Parts
//              of the total (reduce_scatter): each process folds its own
//              part, unless an output lies over the input the other reads.
//              Where the kernel forbids such access (probed when the team
//              is built) or HREDUCE_NODE_SINGLE_COPY=off, the chunks do it.
//   direct     a process whose input, output or prefix lies in memory from
//              allocate() says where in its announcement: it skips its
//              stage (the folders read its input there) or its drain (the
//              folders write its part of result[s], or its prefix, there
//              right after folding their slice). The steps and waits stay.
//
// The segment's size is fixed when the team is built: the vector length
// never changes it. Long vectors simply take more steps.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hreduce/team.hpp"
#include "src/common/wait.hpp"
#include "src/node/node_way.hpp"
#include "src/node/segment.hpp"
#include "src/transport/channel.hpp"

namespace hreduce::detail {

// Inputs of at most NodeGroup::inline_bytes() travel inside the
// announcement: kNodeInlineBudget over the number of other processes,
// rounded down to lines, within [kNodeInlineFloor, kNodeInline]. A process
// that wants the total reads every other process's input, so the budget
// bounds what one reads per call. Two processes get 16 KiB, where the
// single copy takes over (at 16 KiB the announcement still beat it, and
// small calls run several times faster inline than through the chunks);
// from 33 processes it is the floor.
inline constexpr std::size_t kNodeInline = 16 * 1024;
inline constexpr std::size_t kNodeInlineFloor = 512;
inline constexpr std::size_t kNodeInlineBudget = 16 * 1024;
// A reduce on two processes goes inline up to this many bytes (the
// announcement's capacity): its receiver folds the other's input straight
// from the announcement, which up to 64 KiB beats the single copy's three
// system calls and split fold. An exscan there stays faster through the
// single copy (two calls, no fold).
inline constexpr std::size_t kNodeInlineReduce = 64 * 1024;
// Announcement slots per process: how far a process may run ahead.
inline constexpr int kNodeSlots = 16;
// Where a process runs ahead, the next announcement's payload is
// prefetched (by its owner for writing, by the others for reading) up to
// this many bytes; of a longer one, only the first line: the lines of a
// longer payload crossed between the cores while the reader's core fetched
// the current ones, and slowed it. Where nobody runs ahead (allreduce), the
// owner's prefetch for writing helps at every length.
inline constexpr std::size_t kNodePrefetchedPayload = 4 * 1024;
// Default bytes per chunk and process of the staging buffers.
inline constexpr std::size_t kNodeChunkBytes = 256 * 1024;
// The single-copy path (two processes): from this many bytes per process
// (and above inline_bytes(kind)): at 16 KiB it beat the chunks, at 4 KiB
// the chunks won.
inline constexpr std::size_t kNodeSingleCopyBytes = 16 * 1024;
// A fold that only one process receives (reduce, scan): below this many
// bytes the receiver reads and folds everything itself (one system call,
// nothing written back); from here the other process folds a part as well
// and writes it into the receiver's output. Splitting won at 48 KiB and
// lost at 24 KiB.
inline constexpr std::size_t kNodeSplitFoldBytes = 48 * 1024;
// Of a shared fold, the receiver takes this many bytes more than its
// fraction: the other reads, folds and writes back (two system calls to
// the receiver's one), and 4 KiB is about what that second call costs it,
// as timed on two processes.
inline constexpr std::size_t kNodeSplitFoldExtraBytes = 4 * 1024;
// The chunks in flight: each process's stage and the result hold as many
// as fit in kNodeRingBytes, from 2 to kNodeMaxBuffers (buffers()).
inline constexpr std::size_t kNodeRingBytes = std::size_t{32} << 20;
inline constexpr std::size_t kNodeMaxBuffers = 8;

// What every process of the node says about one node operation. All fields
// but `failure` must agree; `signature` covers them and whatever else the
// caller compares (element type, op, counts).
struct NodeCallInfo {
  std::uint64_t signature = 0;
  CollectiveKind kind = CollectiveKind::barrier;
  std::size_t count = 0;
  int root = 0;
  const char* type_name = "";
  const char* op_name = "";
  const char* failure = nullptr;  // this process failed already: say why
};

// One node reduction. Every process contributes `in` (count elements) and
// receives elements [out_lo, out_hi) of x_0 ∘ … ∘ x_{P-1} at `out` (element
// out_lo lands at out[0]); with `prefix`, a process of node rank > 0 also
// receives x_0 ∘ … ∘ x_{rank-1}, all `count` elements, or with `inclusive`
// every process x_0 ∘ … ∘ x_rank.
struct NodeReduction {
  const void* in = nullptr;
  std::size_t count = 0;
  const ErasedOp* op = nullptr;
  void* out = nullptr;
  std::size_t out_lo = 0, out_hi = 0;
  void* prefix = nullptr;
  bool inclusive = false;
  // The caller's call ends with this operation: if this process receives
  // nothing from the others (or only its own inclusive prefix), it may run
  // ahead (see the picture above).
  bool may_run_ahead = false;
  // No other process reads this process's input in this operation: it
  // alone receives every fold that includes it (a reduce's receiver, the
  // last process of a scan that nobody wants the node's total of). A small
  // input then stays out of the announcement (see NodeGroup::reduce).
  bool input_private = false;
};

class NodeGroup {
 public:
  // No process has marked the node broken (yet).
  bool intact() const;
  // This process's words and counters back to their start, and with node
  // rank 0 the broken mark (Team::resynchronize; the caller keeps every
  // process of the node out of operations until all have restarted).
  void restart();
  // Bytes of the segment for `processes` processes and chunks of
  // `chunk_bytes`.
  static std::size_t segment_bytes(int processes, std::size_t chunk_bytes);
  // How many chunks of each process's stage, and of the result, the ring
  // holds (B in the picture above).
  static int buffers(int processes, std::size_t chunk_bytes);

  // `segment`: zeroed, segment_bytes(size, chunk_bytes) long, mapped by
  // every process of the node. `first_process`: the team's index of node
  // rank 0's process, for messages. `crowded`: the node's members outnumber
  // its CPUs, so waiters spin only briefly. `run_ahead`: contributors may
  // run ahead (TeamOptions::run_ahead).
  NodeGroup(SharedSegment segment, int rank, int size, int first_process, std::size_t chunk_bytes,
            std::chrono::milliseconds timeout, bool crowded, bool run_ahead = true);
  ~NodeGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This process has the node's last rank.
  bool last() const { return rank_ == size_ - 1; }
  std::size_t segment_size() const { return segment_.size(); }
  std::size_t chunk_bytes() const { return chunk_; }
  // Inputs of at most this many bytes travel in the announcement (above);
  // for a reduce, inline_bytes(CollectiveKind::reduce).
  std::size_t inline_bytes() const { return inline_bytes_; }
  std::size_t inline_bytes(CollectiveKind kind) const {
    return kind == CollectiveKind::reduce ? inline_reduce_bytes_ : inline_bytes_;
  }
  int buffer_count() const { return static_cast<int>(buffers_); }

  // Each returns the failure every process of the node sees, the same text
  // everywhere ("" when none): a failure announced by some process, a
  // disagreement, or an op that threw. A process that dies, a wait past
  // the timeout, or a failed operation that some process had already left
  // (see "run ahead" above) throws Error instead: the node can no longer
  // go on.
  std::string reduce(const NodeCallInfo& info, const NodeReduction& reduction);
  std::string broadcast(const NodeCallInfo& info, void* data, std::size_t bytes, int root);
  std::string agree(const NodeCallInfo& info);

  // Collective over the node's processes: publishes how this process is
  // placed (`mine`, for people) and waits until every process has; returns
  // the failure text as the reductions do.
  // It also settles whether the processes may read each other's memory
  // (the single-copy path, above) and whether they publish without a fence
  // (light_publish()).
  std::string describe(const std::string& mine);
  std::string description(int rank) const;
  bool single_copy() const { return single_copy_; }
  NodeShape shape() const { return {size_, chunk_, single_copy_}; }
  // Whether publishing needs no fence (asymmetric_fence.hpp), as settled by
  // describe(); HREDUCE_NODE_ASYMMETRIC_FENCE=off in any process keeps it.
  bool light_publish() const { return light_publish_; }
  int pid(int rank) const;
  // The staging chunks of a process, and the result chunks: where their
  // pages sit is what explain() reports.
  const void* staging(int rank) const { return stage(rank, 0); }
  const void* results() const { return result(0); }

  // Collective over the node's processes (`node` connects exactly them,
  // each calls it in step, sizes may differ): memory of `bytes` that every
  // process of the node maps. A reduction whose input, output or prefix
  // lies in it is read and written there by the folding processes
  // directly, skipping the copy through the staging buffers. It lives as
  // long as the group.
  void* allocate(Channel& node, std::size_t bytes);

 private:
  struct Layout;
  struct Header;
  struct Slot;
  struct ProcessArea;

  Header& header() const;
  // Throws when some process marked the node broken (leaving this process's
  // words at their end, so that nobody waits for it any more).
  void check_broken() const;
  // The two phases of giving up on a wait, and the wait for the verdict of
  // a process in the middle of them (node_group.cpp).
  bool arrived_after_all(const std::atomic<std::uint64_t>& word, std::uint64_t target) const;
  void settle_give_ups() const;
  [[noreturn, gnu::noinline, gnu::cold]] void throw_broken() const;
  [[noreturn]] void break_node(const std::string& text) const;
  void abandon() const;
  // Before this operation's announcement overwrites a slot: every other
  // process has left the operation that slot held. Called only when
  // everyone_announced_ does not show it (op - kNodeSlots + 1 and on).
  void wait_for_slot(std::uint64_t op);
  // Brings an announcement's lines (the first, and the payload's) into this
  // core's cache ahead of use.
  static constexpr int kForReading = 0, kForWriting = 1;
  template <int kWrite>
  static void prefetch_slot(const Slot& slot, std::size_t payload_bytes);

  ProcessArea& area(int rank) const;
  std::byte* stage(int rank, int buffer) const;
  std::byte* result(int buffer) const;

  // Where a buffer sits in the memory of NodeGroup::allocate: the k-th
  // allocation of its process, at an offset (allocation -1: elsewhere).
  struct Place {
    std::int32_t allocation = -1;
    std::uint64_t offset = 0;
  };
  struct Direct {
    Place in, out, prefix;
    std::uint64_t out_lo = 0, out_hi = 0;
    // Scan: this process receives part of the node's total (without any,
    // the last process's input is read by nobody unless it is inclusive).
    std::uint32_t wants_total = 0;
    // For the single-copy path: where this process's input, output and
    // prefix lie in its own address space (0: none), and whether it
    // receives all of the total (1) or a part (2).
    std::uint64_t input_address = 0, output_address = 0, prefix_address = 0;
    std::uint32_t total = 0;
  };

  // Announces, waits for every process's announcement, and checks them.
  // `contributes_only`: this process needs nothing from the others in this
  // operation, so it may run ahead.
  std::string announce_and_agree(const NodeCallInfo& info, const void* payload,
                                 std::size_t payload_bytes, bool inclusive = false,
                                 const Direct* direct = nullptr, bool contributes_only = false);
  // What nearly every operation finds, in one pass over slot s's lines:
  // nobody failed, and every process announced the same call after the
  // same ones.
  bool all_agree(int s) const;
  std::string compare_announcements(const NodeCallInfo& info);
  std::string disagreement(const NodeCallInfo& info) const;
  void wait(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
            const char* what) const;
  void wait_all(std::atomic<std::uint64_t> ProcessArea::*word, std::uint64_t target,
                const char* what) const;
  void publish(std::atomic<std::uint64_t>& word, std::uint64_t value) const;
  bool receives_prefix(const NodeReduction& r) const {
    return r.prefix != nullptr && (rank_ > 0 || r.inclusive);
  }
  // Scan: whether this process's folder writes its own prefix straight
  // into its private output (its input was staged).
  bool writes_own_prefix(const NodeReduction& r) const;
  // Scan: whether anybody needs the last process's input this operation.
  bool last_input_read() const;
  // Scan: whether some process receives the node's total or a part of it.
  bool anyone_wants_total() const;
  // Whether this process leaves its input out of a small operation's
  // announcement: nobody else reads it (NodeReduction::input_private) and
  // its own fold reads it before writing over it.
  bool keeps_input(const NodeReduction& r) const;
  std::string reduce_small(const NodeReduction& r, bool kept_input);
  std::string reduce_chunked(const NodeReduction& r);
  // The single-copy path (node_single_copy.cpp): how it shares the work
  // (the same answer on every process), and running it.
  struct SingleCopyPlan {
    // none: the chunks instead. cut: process 0 computes every result over
    // elements [0, cut), process 1 over the rest. own_parts: each process
    // computes its own part of the total (reduce_scatter).
    enum class Way { none, cut, own_parts } way = Way::none;
    std::size_t cut = 0;
  };
  SingleCopyPlan single_copy_plan(const NodeReduction& r) const;
  std::string reduce_single_copy(const NodeReduction& r, const SingleCopyPlan& plan);
  void fold_slice(const NodeReduction& r, int buffer, std::size_t c0, std::size_t lo,
                  std::size_t hi);
  Place find_allocation(const void* data, std::size_t bytes) const;
  std::byte* at(int rank, const Place& place) const;

  SharedSegment segment_;
  int rank_, size_, first_process_;
  std::size_t chunk_;
  std::size_t inline_bytes_, inline_reduce_bytes_;
  std::uint64_t buffers_;
  std::chrono::milliseconds timeout_;
  int spins_;
  std::chrono::microseconds keep_polling_;
  // Private per process: operations and chunk steps so far (the same on
  // every process of the node), the running operation for messages.
  std::uint64_t ops_ = 0;
  std::uint64_t steps_ = 0;
  CollectiveKind kind_ = CollectiveKind::barrier;
  Deadline deadline_;
  std::uint64_t last_signature_[kNodeSlots];
  bool run_ahead_;
  bool single_copy_ = false;    // settled by describe()
  bool light_publish_ = false;  // likewise
  // The last operation this process waited in and compared, and one that
  // every process is known to have announced.
  std::uint64_t compared_ = 0, everyone_announced_ = 0;
  // Whether this process, or another that waited, compared an operation
  // less than kNodeSlots - 1 before `op` (refreshing compared_).
  bool recently_compared(std::uint64_t op);
  // Of the signatures of every operation so far (announced in each slot as
  // it stood before that operation).
  std::uint64_t digest_ = 0;
  std::vector<std::byte> accumulator_, scratch_;  // scan's fold, C bytes each
  // Every process's allocations (allocate()), this process's own included.
  std::vector<std::vector<SharedSegment>> peers_;
};

}  // namespace hreduce::detail
