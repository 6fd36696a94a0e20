// The nonblocking calls of one team of threads, without progress threads
// (with them, and on teams spanning processes, each member's calls run on
// a CallQueue instead: request.cpp): a ring of slots, one per
// call in flight, indexed by the call's number (members number their
// nonblocking calls alike, because they issue them in the same order).
//
//   member 0 ──publish──┐                    ┌── claim chunk 0, fold, finish ──┐
//   member 1 ──publish──┼─ first to see all: ┼── claim chunk 1, fold, finish ──┼─ last to
//   member 2 ──publish──┘  agree, plan,      └── claim chunk 2 ...            ─┘ finish:
//                          open the claims                                      completed
//
// Starting a call publishes the member's arguments into its part of the
// slot, under the call's number. A member that tests or waits and finds
// every member's number there checks that all calls agree (the signature
// the blocking calls compare; every member finds the same, and a failure
// is recorded once). A small call (small_calls.cpp) needs nothing more:
// each member folds its own output from the inputs copied into the slot.
// A large one is opened by whoever gets there first (a compare-exchange):
// it cuts the element range into chunks and opens them, and from then on
// whoever tests or waits on the call claims chunks one at a time and folds
// each across every member's input in rank order (chunk_fold.cpp),
// writing every output the chunk feeds.
// The one who finishes the last chunk marks the call completed: every
// member's input has been read and every output written. Nobody waits for
// an absent member to do its share.
//
// The words below carry the call's number (`claims` and `finished` in
// their high bits, over the chunks left to claim and the chunks finished),
// so a request that looks late still reads the truth and a claim racing
// with the slot's reuse fails its compare-exchange;
// `completed` is the latest completed call of the slot. A slot is reused
// for call s + kPendingSlots once every member is done with call s (its
// `done`): the member starting that call drives its own part there itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "src/common/failure.hpp"
#include "src/common/wait.hpp"
#include "src/engine/process_step.hpp"
#include "src/engine/team_state.hpp"
#include "src/topology/numa_memory.hpp"

namespace hreduce::detail {

// Slots per team: a member has at most kPendingSlots - 1 calls in flight;
// starting one more first finishes its oldest.
inline constexpr int kPendingSlots = 16;
// `claims` and `finished` hold (call << kChunkBits) + chunks.
inline constexpr int kChunkBits = 24;
inline constexpr std::uint64_t kChunkMask = (std::uint64_t{1} << kChunkBits) - 1;

// Inputs up to this size go by the slot (small_calls.cpp).
inline constexpr std::size_t kSmallCallBytes = 32;

// One member's part of a call.
struct alignas(kControlAlign) PublishedCall {
  // What the other members read of a small call shares the first line.
  std::atomic<std::uint64_t> seq{0};  // the member published call `seq` here
  std::uint64_t signature = 0;        // signature_of(describe(call)): what must agree
  bool invalid = false;               // its own arguments failed (the failure is recorded)
  bool in_place = false;
  bool small = false;  // the input is in `payload`, and every member folds its own output
  // The call, in the member's request: valid until the member's part is
  // done, which for a large call is after every chunk (the readers of
  // other members' calls), and for a failing one after the failure is
  // recorded (agree). A pointer, not a copy: copying 100 bytes was a tenth
  // of a persistent 8-byte call's time.
  const Call* call = nullptr;
  alignas(16) std::byte payload[kSmallCallBytes];
};
static_assert(offsetof(PublishedCall, payload) + kSmallCallBytes <= 64,
              "what the others read of a small call fits the first line");

// What the member that arrived last decided for the call.
struct CallPlan {
  CollectiveKind kind = CollectiveKind::allreduce;
  std::size_t total = 0;  // elements of every member's input
  std::size_t chunk = 1;  // elements per chunk
  std::size_t elem_size = 0;
  bool staged = false;  // in-place reduce_scatter: blocks go through `staging`
  std::vector<std::byte> staging;
};

struct PendingSlot {
  alignas(kControlAlign) std::atomic<std::uint64_t> claims{0};
  alignas(kControlAlign) std::atomic<std::uint64_t> finished{0};
  alignas(kControlAlign) std::atomic<std::uint64_t> completed{0};
  alignas(kControlAlign) std::atomic<std::uint64_t> opener{0};  // the latest call opened
  // Written by the last to arrive before `claims` opens; read after a claim.
  std::atomic<std::uint64_t> chunks{0};
  CallPlan plan;
  // Every member's part, in pages of the slot's own (PendingCalls::parts_).
  PublishedCall* members = nullptr;
};

class PendingCalls {
 public:
  PendingCalls(TeamState& team, int members);
  ~PendingCalls();

  // Starts call `seq` of member `rank`'s with `call` (problem: its own
  // argument error, empty when fine), which must stay where it is until
  // the member's part of the call is done. Returns the call's number.
  std::uint64_t publish(int rank, const Call& call, std::uint64_t signature,
                        const std::string& problem);
  // signature_of(describe(call)), computed once for a run of calls that
  // describe alike (as the blocking calls do: execute.cpp).
  std::uint64_t signature(int rank, const Call& call);
  // Whether member `rank`'s part of call `seq` is complete; does the
  // chunks it can claim first (or its own output, for a small call).
  bool test(std::uint64_t seq, int rank);
  // Works on call `seq` and waits for member `rank`'s part of it to end;
  // `kind` and `persistent` word a timeout.
  void drive(std::uint64_t seq, int rank, CollectiveKind kind, bool persistent);
  // The failure of call `seq` for one member, once; none when it went well.
  Failure take_failure(std::uint64_t seq);
  // Whether any call's failure is still to be taken: where none is, a
  // call's end skips take_failure() and the Failure it builds.
  bool failures_pending() const { return failures_unread_.load(std::memory_order_relaxed) != 0; }
  // Every counter back to the start (Team::resynchronize: nothing in flight).
  void restart();

  TeamState& team() { return team_; }
  int size() const { return members_; }

 private:
  PendingSlot& slot_of(std::uint64_t seq) { return slots_[seq % kPendingSlots]; }
  void open(PendingSlot& slot, std::uint64_t seq);
  bool everyone_published(const PendingSlot& slot, std::uint64_t seq) const;
  bool finish_part(int rank, std::uint64_t seq);
  // Member `rank`'s word for seq's slot: the latest call of the slot it is
  // done with (its output written, the others' payloads read). The slot is
  // reused once every member's word says so.
  std::atomic<std::uint64_t>& done_of(int rank, std::uint64_t seq) {
    return done_words_[static_cast<std::size_t>(rank) * kDoneWordsPerMember +
                       seq % kPendingSlots * kDoneWordStride];
  }
  bool agree(PendingSlot& slot, std::uint64_t seq);
  void plan(PendingSlot& slot);
  bool claim(PendingSlot& slot, std::uint64_t seq, std::uint64_t& chunk);
  // Waits until every other member is done with call `seq`.
  void wait_for_others(std::uint64_t seq, int rank, CollectiveKind kind);
  std::string what_is_missing(std::uint64_t seq);
  // What the slots' parts and the done words are laid out in.
  static constexpr std::size_t kPage = 4096;
  void work(PendingSlot& slot, std::uint64_t seq, std::uint64_t chunk, const char* worker);
  void complete(PendingSlot& slot, std::uint64_t seq);
  void record(std::uint64_t seq, ErrorKind kind, const std::string& text);
  // The failure paths of publish() and agree(), apart: their strings would
  // give those a stack frame and its guard on every call.
  [[gnu::noinline]] void record_problem(std::uint64_t seq, int rank, const std::string& problem);
  [[gnu::noinline]] void record_disagreement(const PendingSlot& slot, std::uint64_t seq);
  void record_locked(std::uint64_t seq, ErrorKind kind, const std::string& text);
  [[noreturn]] void time_out(std::uint64_t seq, const std::string& label,
                             const std::string& waited_for);
  // drive()'s time_out(), apart for the same reason as record_problem().
  [[noreturn, gnu::noinline]] void time_out_waiting(std::uint64_t seq, CollectiveKind kind,
                                                    bool persistent);

  TeamState& team_;
  const int members_;
  std::unique_ptr<PendingSlot[]> slots_;
  // The slots' members' parts, each slot's in pages no other slot uses.
  // Packed 512 bytes apart, a loop of 8-byte calls between two members
  // split into fast calls (about 250 cycles) and slow ones (about 1100, two
  // transfers of a line: the reader had fetched the writer's line before
  // it was written); the mean call was 1.25-1.35x the blocking call's,
  // on pages of their own 1.0-1.15x (docs/performance.md). A prefetcher
  // is the likely cause; without hardware counters here, not shown.
  NumaBuffer parts_;
  // The `done` words (done_of), each member's on a page of its own on its
  // NUMA node, a line each. Each member writes its own at the end of every
  // call; the others read it only when a slot comes round while they lag.
  // As the second line of the member's part of the slot, next to the line
  // the others read on every call, a loop of persistent 8-byte calls
  // between two members took 0.95-1.12x the blocking call's time; here
  // 0.87-0.93x (nine runs in turns; with the host in a slower phase
  // 1.07-1.20x against 1.02-1.11x, docs/performance.md): a prefetcher
  // again, as with the parts above.
  static constexpr std::size_t kDoneWordStride = kControlAlign / sizeof(std::uint64_t);
  static constexpr std::size_t kDoneWordsPerMember = kPage / sizeof(std::uint64_t);
  static_assert(kPendingSlots * kDoneWordStride <= kDoneWordsPerMember);
  NumaBuffer dones_;
  std::atomic<std::uint64_t>* done_words_ = nullptr;
  struct alignas(kControlAlign) Issued {
    std::uint64_t seq = 0;   // the member's latest call's number
    bool described = false;  // `last` holds a call's description
    Descriptor last;
    std::uint64_t last_signature = 0;  // of `last`
  };
  std::unique_ptr<Issued[]> issued_;
  // Failures by call, each read once by every member (error paths only).
  std::mutex failures_mutex_;
  struct Recorded {
    Failure failure;
    int unread = 0;
  };
  std::map<std::uint64_t, Recorded> failures_;
  std::atomic<int> failures_unread_{0};
};

// How messages name a call: "iallreduce", "allreduce_init".
std::string nonblocking_label(CollectiveKind kind, bool persistent);

// Folds chunk `chunk` of the call in `slot` (chunk_fold.cpp).
void fold_chunk(PendingSlot& slot, int members, std::uint64_t chunk);
// Copies in-place reduce_scatter blocks from staging to their owners.
void unstage_blocks(PendingSlot& slot, int members);
// Whether `call` goes by the slot: a predefined op (it cannot throw, so a
// member folding alone cannot miss another's failure) and an input of at
// most kSmallCallBytes. Decided from what the signature covers, so members
// that agree decide alike.
bool goes_small(const Call& call, int members);
// Member `rank`'s output of a small call, from every member's payload.
void fold_small(const PendingSlot& slot, int members, int rank);

// The team's nonblocking calls, built on first use.
PendingCalls& pending_calls_of(TeamState& team);

}  // namespace hreduce::detail
