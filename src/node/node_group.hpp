// The node level: the processes of one node combine through one shared
// segment instead of messages. Each process takes part through one thread
// (its leader, member 0), after its own members have combined in place
// through the shared-memory engine (src/hybrid/). Messages between
// processes of one node would cost a copy into the library and one out at
// every step; in a segment that every process maps, a process folds the
// others' data where it lies, and waits on a word the other writes
// (shared_wait.hpp) instead of polling a queue.
//
// One node operation, P processes, the segment laid out as
//
//   header │ process 0 │ … │ process P-1 │ stage[P][B][C] │ result[B][C] │ long[P][kNodeSlots]
//            kNodeSlots announcement slots, the progress words staged, folded,
//            drained (each on its own 128-byte line), the fold's failure
//
// (`long`: per slot, a place for an input past the announcement's own 16
// KiB, up to 128 KiB; only a segment of two processes has it)
//
// and its steps, each in a part of its own:
//
//   announce, agree,  node_agreement.cpp: every process announces the call,
//   run ahead         and all leave with the same verdict
//   small             node_small.cpp: inputs inside the announcements
//   chunked           node_chunk_ring.cpp: the vector through a ring of
//                     staging chunks
//   single copy       node_single_copy.cpp: two processes reach each other's
//                     private memory (peer_memory.hpp); with `auto`, where
//                     it won node_single_copy_race.cpp's race at the build
//   direct            node_allocations.hpp: buffers from allocate(), read and
//                     written in place by the chunk ring
//   broadcast         node_broadcast.cpp
//
// node_way.hpp decides between small, single copy and chunks; for two
// processes above 8 KiB up to the inline limit, node_measured_way.cpp
// between the first two by what each took lately. The segment's
// size is fixed when the team is built: the vector length never changes it.
// Long vectors simply take more steps. The sizes and thresholds are in
// node_limits.hpp; why each sits where it does: docs/performance.md,
// "Where the node level's thresholds come from".
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hreduce/team.hpp"
#include "src/common/failure.hpp"
#include "src/common/wait.hpp"
#include "src/node/cut_balance.hpp"
#include "src/node/node_allocations.hpp"
#include "src/node/node_limits.hpp"
#include "src/node/node_way.hpp"
#include "src/node/segment.hpp"
#include "src/node/way_by_measure.hpp"
#include "src/transport/channel.hpp"

namespace hreduce::detail {

class PeerEndpoint;
class PeerMemory;

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
  Failure failure;  // this process failed already: say why
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
  // ahead, and if it receives only a prefix, it may leave once the
  // processes before it have announced (node_agreement.cpp).
  bool may_run_ahead = false;
  // No other process reads this process's input in this operation: it
  // alone receives every fold that includes it (a reduce's receiver, the
  // last process of a scan that nobody wants the node's total of). A small
  // input then stays out of the announcement (node_small.cpp).
  bool input_private = false;
};

// A node reduction of `count` elements of `op` from `in`, this process
// receiving elements [out_lo, out_hi) at `out`; callers set the rest (a
// scan's prefix, running ahead, a private input) on what it returns.
inline NodeReduction node_reduction(const void* in, std::size_t count, const ErasedOp& op,
                                    void* out = nullptr, std::size_t out_lo = 0,
                                    std::size_t out_hi = 0) {
  NodeReduction r;
  r.in = in;
  r.count = count;
  r.op = &op;
  r.out = out;
  r.out_lo = out_lo;
  r.out_hi = out_hi;
  return r;
}

// The kinds describe()'s race times (HREDUCE_NODE_SINGLE_COPY=auto), in its
// order; reduce_scatter_block goes as reduce_scatter (kind_bit).
inline constexpr CollectiveKind kNodeRacedKinds[] = {
    CollectiveKind::allreduce, CollectiveKind::reduce, CollectiveKind::reduce_scatter,
    CollectiveKind::scan, CollectiveKind::exscan};

// The node level of one team, as one process sees it. Every operation is
// collective over the node's processes, called in the same order by each.
class NodeGroup {
 public:
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
  // Inputs of at most this many bytes travel in the announcement; where
  // one process receives (one_receiver()), inline_bytes(kind).
  std::size_t inline_bytes() const { return inline_bytes_; }
  std::size_t inline_bytes(CollectiveKind kind) const {
    return one_receiver(size_, kind) ? inline_one_receiver_bytes_ : inline_bytes_;
  }
  int buffer_count() const { return static_cast<int>(buffers_); }

  // No process has marked the node broken (yet).
  bool intact() const;
  // This process's words and counters back to their start, and with node
  // rank 0 the broken mark (Team::resynchronize; the caller keeps every
  // process of the node out of operations until all have restarted).
  void restart();

  // Each returns the failure every process of the node sees, the same
  // everywhere (none when the call succeeded): a failure announced by some
  // process (its kind), a disagreement (count_mismatch, root_mismatch or
  // mismatch), an op that threw (op) or a single copy the kernel refused
  // (transport). A process that dies, a wait past the timeout, or a failed
  // operation that some process had already left (it ran ahead) throws
  // Error instead: the node can no longer go on.
  Failure reduce(const NodeCallInfo& info, const NodeReduction& reduction);
  Failure broadcast(const NodeCallInfo& info, void* data, std::size_t bytes, int root);
  Failure agree(const NodeCallInfo& info);

  // Collective over the node's processes: publishes how this process is
  // placed (`mine`, for people) and waits until every process has; returns
  // the failure as the reductions do. It also settles whether the
  // processes may reach each other's memory (single_copy()) and whether
  // they publish without a fence (light_publish()).
  // `staging`: where this process asked for its staging chunks, for people.
  Failure describe(const std::string& mine, const std::string& staging = {});
  std::string description(int rank) const;
  std::string staging_request(int rank) const;
  bool single_copy() const { return single_copy_; }
  // Whether long calls of `kind` take it: allowed, and not beaten by the
  // chunks in describe()'s race.
  bool single_copy(CollectiveKind kind) const {
    return single_copy_ && (chunks_won_ & kind_bit(kind)) == 0;
  }
  // Where describe() raced the single copy against the chunks
  // (HREDUCE_NODE_SINGLE_COPY=auto in some process, two processes, the
  // kernel allowing it): the times of `kind`'s race summed over the node's
  // processes; else nothing.
  std::optional<RaceTimes> single_copy_race(CollectiveKind kind) const {
    return races_[std::countr_zero(kind_bit(kind))];
  }
  // The single copy's balanced cuts (cut_balance.hpp), for tests.
  const CutBalance& cut_balance() const { return cut_balance_; }
  // Calls of this process that either way could serve (way_by_measure.hpp)
  // and that took the streamed way (inline or chunks) [0] or the single
  // copy [1], for tests.
  std::array<std::uint64_t, 2> measured_calls() const { return measured_calls_; }
  // Where the way of a call of `kind` and `bytes` per process (of an op
  // that cannot throw, elements of at most a chunk), `way` by node_way(),
  // goes by measure: the way this process's next such call would take;
  // nothing where the size decides alone.
  std::optional<NodeWay> measured_way(CollectiveKind kind, std::size_t bytes, NodeWay way) const;
  NodeShape shape() const { return {size_, chunk_, single_copy_, chunks_won_}; }
  // Whether publishing needs no fence (asymmetric_fence.hpp), as settled by
  // describe(); HREDUCE_NODE_ASYMMETRIC_FENCE=off in any process keeps it.
  bool light_publish() const { return light_publish_; }
  int pid(int rank) const;
  // The staging chunks of a process, and the result chunks: where their
  // pages sit is what explain() reports.
  const void* staging(int rank) const;
  const void* results() const;
  // This process's own staging chunks (staging_bytes() of them): its leader
  // writes them, every process's folder reads them, so the hybrid layer
  // binds their pages to the leader's NUMA node (numa_placement.hpp).
  void* own_staging() const;
  std::size_t staging_bytes() const { return static_cast<std::size_t>(buffers_) * chunk_; }

  // Collective over the node's processes (`node` connects exactly them,
  // each calls it in step, sizes may differ): memory of `bytes` that every
  // process of the node maps, read and written in place by the chunk ring
  // (node_allocations.hpp). It lives as long as the group.
  void* allocate(Channel& node, std::size_t bytes) { return allocations_.allocate(node, bytes); }

 private:
  struct Layout;
  struct Header;
  struct Slot;
  struct ProcessArea;
  struct SharedPlaces;
  struct PeerAddresses;

  // The segment (node_group.cpp).
  Header& header() const;
  ProcessArea& area(int rank) const;
  std::byte* stage(int rank, int buffer) const;
  std::byte* result(int buffer) const;
  // Slot of the running operation in `rank`'s area.
  Slot& slot(int rank) const;
  // Where `rank`'s input of `bytes` in slot `s` lies, and where the one it
  // announced for the running operation does.
  std::byte* payload_at(int rank, int s, std::size_t bytes) const;
  const std::byte* payload_of(int rank) const;

  // Waiting and breaking (node_group.cpp). check_broken throws when some
  // process marked the node broken (leaving this process's words at their
  // end, so that nobody waits for it any more).
  void check_broken() const;
  // The two phases of giving up on a wait, and the wait for the verdict of
  // a process in the middle of them.
  bool arrived_after_all(const std::atomic<std::uint64_t>& word, std::uint64_t target) const;
  void settle_give_ups() const;
  [[noreturn, gnu::noinline, gnu::cold]] void throw_broken() const;
  [[noreturn]] void break_node(const std::string& text) const;
  void abandon() const;
  void wait(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
            const char* what) const;
  [[gnu::noinline]] void wait_longer(const std::atomic<std::uint64_t>& word, std::uint64_t target,
                                     int rank, const char* what) const;
  void wait_all(std::atomic<std::uint64_t> ProcessArea::*word, std::uint64_t target,
                const char* what) const;
  void publish(std::atomic<std::uint64_t>& word, std::uint64_t value) const;
  // describe()'s probe: whether this process reaches every other's
  // memory through peer_memory_ (opening its endpoints to them).
  bool reaches_every_peer();
  // describe()'s race (node_single_copy_race.cpp): settles chunks_won_ by
  // timing both ways for each kind, the same on every process.
  Failure race_single_copy();
  // A verdict kept from an earlier race of the same processes (another
  // communicator's team), as ProcessArea::race_known: they skip the race
  // only if all kept the same one.
  std::uint32_t known_race_verdict() const;
  Failure race_kind(CollectiveKind kind, RaceTimes& best);

  // Announcing and agreeing (node_agreement.cpp).
  struct Announcement {
    const void* payload = nullptr;
    std::size_t payload_bytes = 0;
    bool inclusive = false;
    // Where this process's buffers lie, for the chunk ring and the single
    // copy (null on the small path, which reads neither).
    const SharedPlaces* places = nullptr;
    const PeerAddresses* addresses = nullptr;
    // This process needs nothing from the others in this operation, so it
    // may run ahead.
    bool contributes_only = false;
    // It needs only the processes before it (a prefix, no reduced part), so
    // it may leave once those have announced and agree.
    bool needs_only_earlier = false;
  };
  // Announces, waits for every process's announcement, and checks them.
  Failure announce_and_agree(const NodeCallInfo& info, const Announcement& announcement);
  // How a process leaves an operation, in its announcement's `ran_ahead`.
  enum Leaving : std::uint32_t {
    kWaitsForAll = 0,
    kRunsAhead = 1,     // at once, after announcing
    kAfterEarlier = 2,  // once every process before it announced, if they agree
  };
  void write_announcement(Slot& mine, const NodeCallInfo& info, const Announcement& announcement,
                          Leaving leaving);
  // Waits for the announcements of processes [0, upto) but this one.
  void wait_for_announcements(std::uint64_t op, int s, int upto);
  // Before this operation's announcement overwrites a slot: every other
  // process has left the operation that slot held. Called only when
  // everyone_announced_ does not show it (op - kNodeSlots + 1 and on).
  void wait_for_slot(std::uint64_t op);
  // What nearly every operation finds, in one pass over slot s's lines:
  // nobody failed, and every process announced the same call after the
  // same ones.
  bool all_agree(int s) const { return agree_before(s, size_); }
  // The same over processes [0, upto).
  bool agree_before(int s, int upto) const;
  // Whether process q left the current operation without waiting for
  // every process: what every process concludes alike from the slots.
  bool left_early(int q) const;
  Failure compare_announcements(const NodeCallInfo& info);
  [[noreturn]] void break_after_run_ahead(const NodeCallInfo& info, Failure failure, bool earlier);
  Failure disagreement(const NodeCallInfo& info) const;
  // Whether this process, or another that waited, compared an operation
  // less than kNodeSlots - 1 before `op` (refreshing compared_ once that
  // fails; then, for a payload of a line or less, less than kNodeSlots / 2).
  bool recently_compared(std::uint64_t op, std::size_t payload_bytes);
  // Brings an announcement's lines (the first, and the payload's) into this
  // core's cache ahead of use.
  static constexpr int kForReading = 0, kForWriting = 1;
  template <int kWrite>
  static void prefetch_slot(const Slot& slot, std::size_t payload_bytes);

  bool receives_prefix(const NodeReduction& r) const {
    return r.prefix != nullptr && (rank_ > 0 || r.inclusive);
  }

  // The small path (node_small.cpp).
  Failure reduce_inline(const NodeCallInfo& info, const NodeReduction& r);
  // Whether this process leaves its input out of a small operation's
  // announcement: nobody else reads it (NodeReduction::input_private) and
  // its own fold reads it before writing over it.
  bool keeps_input(const NodeReduction& r) const;
  void reduce_small(const NodeReduction& r, bool kept_input);

  // The chunk ring (node_chunk_ring.cpp). One step of it: elements
  // [c0, c0 + m) of the vector in buffer `buffer`, of which this process
  // folds [c0 + lo, c0 + hi).
  struct ChunkStep {
    std::uint64_t step = 0;
    int buffer = 0;
    std::size_t c0 = 0, m = 0, lo = 0, hi = 0;
  };
  SharedPlaces shared_places(const NodeReduction& r) const;
  Failure reduce_chunked(const NodeReduction& r);
  void stage_chunk(const NodeReduction& r, const ChunkStep& k);
  void drain_chunk(const NodeReduction& r, const ChunkStep& k, bool failed);
  Failure fold_failure() const;
  void fold_slice(const NodeReduction& r, const ChunkStep& k);
  void fold_reduction_slice(const NodeReduction& r, const ChunkStep& k);
  void fold_scan_slice(const NodeReduction& r, const ChunkStep& k);
  const std::byte* slice_input(const NodeReduction& r, const ChunkStep& k, int q) const;
  // Scan: whether this process's folder writes its own prefix straight
  // into its private output (its input was staged).
  bool writes_own_prefix(const NodeReduction& r) const;
  // Scan: whether anybody needs the last process's input this operation.
  bool last_input_read() const;
  // Scan: whether some process receives the node's total or a part of it.
  bool anyone_wants_total() const;

  // The single copy (node_single_copy.cpp): how it shares the work (the
  // same answer on every process), and running it.
  struct SingleCopyPlan {
    // none: the chunks instead. cut: process 0 computes every result over
    // elements [0, cut), process 1 over the rest. own_parts: each process
    // computes its own part of the total (reduce_scatter).
    enum class Way { none, cut, own_parts } way = Way::none;
    std::size_t cut = 0;
    // One receiver whose fold is shared (cut_balance.hpp): which, and
    // whether the other also copies its input to its scan prefix; -1 for
    // halves, own parts, and a fold the rule leaves to one process.
    int receiver = -1;
    bool other_copies = false;
  };
  PeerAddresses peer_addresses(const NodeReduction& r) const;
  SingleCopyPlan single_copy_plan(const NodeReduction& r);

  // The measured ways (node_measured_way.cpp; the pure parts in
  // way_by_measure.hpp): a call that both a streamed way (the inline one or
  // the chunks) and the single copy can serve, by its kind's and size
  // class's indices ({-1, -1}: any other), with the classes its kind's size
  // gives to the single copy. Decided from what every process of the node
  // knows alike.
  struct MeasuredCall {
    int kind = -1, size = -1;
    std::uint8_t single_copy_by_size = 0;
  };
  // The way that streams a measured call's inputs through the segment:
  // the inline one where its size gives that, else the chunks.
  static NodeWay streamed_way(NodeWay by_size) {
    return by_size == NodeWay::single_copy ? NodeWay::chunks : by_size;
  }
  MeasuredCall measured_call(CollectiveKind kind, std::size_t bytes, std::size_t elem_size,
                             NodeWay way) const;
  // Whether operation `op` takes the single copy for a measured call.
  bool takes_single_copy(MeasuredCall call, std::uint64_t op) const;
  Failure reduce_by(NodeWay way, const NodeCallInfo& info, const NodeReduction& r);
  void record_way(MeasuredCall call, bool single_copy, std::uint64_t ticks);
  // Node rank 0: switches the size classes of `call`'s kind to the way
  // that pays.
  void steer_ways(MeasuredCall call);
  // The latest operation the other process of two is known to have
  // announced, as far as it settles a switch from `from` on.
  std::uint64_t announced_by_other(std::uint64_t from) const;
  SingleCopyPlan own_parts_plan(std::size_t es) const;
  struct Wanted;
  Failure reduce_single_copy(const NodeReduction& r, const SingleCopyPlan& plan);
  void copy_pieces(const NodeReduction& r, const SingleCopyPlan& plan);
  void copy_piece(const NodeReduction& r, const Wanted (&want)[2], std::size_t a, std::size_t m);

  SharedSegment segment_;
  int rank_, size_, first_process_;
  std::size_t chunk_;
  std::size_t inline_bytes_, inline_one_receiver_bytes_;
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
  SingleCopySetting single_copy_setting_;          // HREDUCE_NODE_SINGLE_COPY
  bool single_copy_ = false;                       // settled by describe()
  std::uint8_t chunks_won_ = 0;                    // likewise (NodeShape::chunks_won)
  std::array<std::optional<RaceTimes>, 8> races_;  // by kind_bit's bit
  bool light_publish_ = false;                     // likewise
  // The last operation this process waited in and compared, and one that
  // every process is known to have announced.
  std::uint64_t compared_ = 0, everyone_announced_ = 0;
  // Of the signatures of every operation so far (announced in each slot as
  // it stood before that operation).
  std::uint64_t digest_ = 0;
  // What this process wrote into the first line of its latest slot, for
  // agree_before() to compare without reading the line back (it says why).
  struct FirstLine {
    std::uint64_t signature = 0, digest = 0;
    bool failed = false;
  } announced_;
  // Scan's fold, C bytes each, and the single copy's: 64 bytes more, so
  // that a piece can sit at the line offset that the kernel copies fastest
  // to or from (at_line_offset_of); `bounce_` (the same, on first need)
  // for a piece the single copy sends from where the kernel's copy crawls.
  std::vector<std::byte> accumulator_, scratch_, bounce_;
  // The single copy's cuts, as every process moves them alike.
  CutBalance cut_balance_;
  // The measured ways: in node rank 0, per kind, the operation from which
  // it steers the kind again.
  std::uint64_t measured_next_steer_[kMeasuredKinds] = {};
  // ... and per class, when it tries the way it left again.
  Remeasure measured_remeasure_[kMeasuredKinds][kMeasuredSizes] = {};
  std::array<std::uint64_t, 2> measured_calls_{};
  // Team::allocate's memory, every process's (node_allocations.hpp).
  NodeAllocations allocations_;
  // How this process reaches the others' private memory (the single
  // copy), and its endpoint to each, opened by describe().
  std::unique_ptr<PeerMemory> peer_memory_;
  std::vector<std::unique_ptr<PeerEndpoint>> peers_;
};

}  // namespace hreduce::detail
