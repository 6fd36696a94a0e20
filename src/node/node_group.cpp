// The node group's own part: the segment and its layout, waiting on the
// others' progress words, breaking the node when a wait cannot end, and
// the probe of what the processes may do to each other (describe()). The
// operations themselves live in their parts (the list in node_group.hpp).
//
// Breaking is for what no verdict can fix: a process that died, a wait
// past the deadline, a failed call that some process had already left. The
// first process to find it marks the header broken with its reason, and
// every process that looks afterwards (each wait does) throws that reason,
// leaving its words at their end so that nobody waits for it any more.
#include "src/node/node_group.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

#include "hreduce/error.hpp"
#include "src/common/asymmetric_fence.hpp"
#include "src/common/environment.hpp"
#include "src/common/failure.hpp"
#include "src/common/level_clock.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/peer_memory.hpp"
#include "src/node/shared_wait.hpp"

namespace hreduce::detail {
namespace {

std::size_t round_chunk(std::size_t chunk) {
  return std::max<std::size_t>(4096, (chunk + 4095) / 4096 * 4096);
}

}  // namespace

int NodeGroup::buffers(int processes, std::size_t chunk_bytes) {
  const std::size_t per_buffer =
      (static_cast<std::size_t>(processes) + 1) * round_chunk(chunk_bytes);
  return static_cast<int>(std::clamp<std::size_t>(kNodeRingBytes / per_buffer, 2, kNodeMaxBuffers));
}

std::size_t NodeGroup::segment_bytes(int processes, std::size_t chunk_bytes) {
  return Layout::end(processes, buffers(processes, chunk_bytes), round_chunk(chunk_bytes));
}

NodeGroup::NodeGroup(SharedSegment segment, int rank, int size, int first_process,
                     std::size_t chunk_bytes, std::chrono::milliseconds timeout, bool crowded,
                     bool run_ahead)
    : segment_(std::move(segment)), rank_(rank), size_(size), first_process_(first_process),
      chunk_(round_chunk(chunk_bytes)),
      inline_bytes_(node_inline_bytes(size, CollectiveKind::allreduce)),
      inline_one_receiver_bytes_(node_inline_bytes(size, CollectiveKind::reduce)),
      buffers_(static_cast<std::uint64_t>(buffers(size, chunk_bytes))), timeout_(timeout),
      spins_(crowded ? kSpinsShared : kSpinsAlone),
      keep_polling_(crowded ? std::chrono::microseconds(0) : std::chrono::microseconds(1000)),
      run_ahead_(run_ahead && size > 1),
      single_copy_setting_(single_copy_setting(environment("HREDUCE_NODE_SINGLE_COPY"))),
      accumulator_(chunk_ + 64), scratch_(chunk_ + 64), allocations_(rank, size),
      peer_memory_(make_peer_memory()) {
  std::fill(std::begin(last_signature_), std::end(last_signature_), ~0ull);
  if (segment_.size() < segment_bytes(size, chunk_bytes)) {
    throw ArgumentError("node level: the segment has " + std::to_string(segment_.size()) +
                        " bytes, but " + std::to_string(size) + " processes need " +
                        std::to_string(segment_bytes(size, chunk_bytes)));
  }
  static_assert(offsetof(Slot, short_payload) + sizeof(Slot::short_payload) <= 64,
                "a short input shares the announcement's first cache line");
  // The segment arrives zeroed, which is every progress word's start value.
  area(rank_).pid.store(static_cast<std::int32_t>(getpid()), std::memory_order_relaxed);
}

NodeGroup::~NodeGroup() = default;

const void* NodeGroup::staging(int rank) const { return stage(rank, 0); }
const void* NodeGroup::results() const { return result(0); }
void* NodeGroup::own_staging() const { return stage(rank_, 0); }

int NodeGroup::pid(int rank) const { return area(rank).pid.load(std::memory_order_relaxed); }

std::string NodeGroup::staging_request(int rank) const {
  const char* text = area(rank).staging_request;
  return std::string(text, strnlen(text, sizeof area(rank).staging_request));
}

std::string NodeGroup::description(int rank) const {
  const char* text = area(rank).description;
  return std::string(text, strnlen(text, sizeof area(rank).description));
}

// Charged to `waiting` only past the first look: a wait that ends there
// takes no time worth timing, and the scope's cost stays off the fast path.
void NodeGroup::wait(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
                     const char* what) const {
  if (word.load(std::memory_order_acquire) < target) {
    wait_longer(word, target, rank, what);
    return;
  }
  settle_give_ups();
  check_broken();
}

void NodeGroup::wait_longer(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
                            const char* what) const {
  LevelScope scope(CallLevel::waiting);
  const int pid = area(rank).pid.load(std::memory_order_relaxed);
  switch (shared_wait_at_least(word, target, deadline_, header().sleepers, spins_, keep_polling_,
                               pid, light_publish_)) {
    case WaitResult::reached:
      // A process that broke the node set its words to their end: what we
      // waited for may never have been written.
      settle_give_ups();
      check_broken();
      return;
    // Giving up marks the node broken before this process leaves: a
    // process that comes to this operation later then throws in it too,
    // instead of finding every announcement there and returning a result.
    case WaitResult::peer_died:
      break_node(std::string(to_string(kind_)) + ": process " +
                 std::to_string(first_process_ + rank) + " (pid " + std::to_string(pid) +
                 ") of this node died while this process waited for it to " + what);
    case WaitResult::timed_out:
      if (arrived_after_all(word, target)) {
        settle_give_ups();
        check_broken();
        return;
      }
      break_node(std::string(to_string(kind_)) + ": timed out after " +
                 std::to_string(timeout_.count()) + " ms waiting for process " +
                 std::to_string(first_process_ + rank) + " (pid " + std::to_string(pid) +
                 ") of this node to " + what);
  }
}

void NodeGroup::wait_all(std::atomic<std::uint64_t> ProcessArea::*word, std::uint64_t target,
                         const char* what) const {
  for (int q = 0; q < size_; ++q) {
    if (q != rank_) wait(area(q).*word, target, q, what);
  }
}

// A deadline that passes just as the awaited process announces could leave
// that process with a result while this one fails. So giving up has two
// phases, ordered against every process's own store and read like the
// sleepers of shared_wait.hpp (a fence here, the heavy side of the
// asymmetric fence where the others publish without one): say so in
// `giving_up`, then read the word once more. A process that announced
// (its store, then its read of `giving_up`) either is seen here, and the
// call goes on, or sees `giving_up` and waits for the verdict
// (settle_give_ups), and fails with this one.
bool NodeGroup::arrived_after_all(const std::atomic<std::uint64_t>& word,
                                  std::uint64_t target) const {
  Header& h = header();
  h.giving_up.fetch_add(1, std::memory_order_seq_cst);
  if (light_publish_) asymmetric_fence_heavy();
  const bool arrived = word.load(std::memory_order_seq_cst) >= target;
  if (arrived) h.giving_up.fetch_sub(1, std::memory_order_release);
  return arrived;  // not: the node breaks, and `giving_up` stays raised
}

void NodeGroup::settle_give_ups() const {
  const Header& h = header();
  if (h.giving_up.load(std::memory_order_acquire) == 0) [[likely]]
    return;
  // The verdict takes microseconds (unless the deciding process died
  // meanwhile: then go on, and its death is noticed where it matters).
  for (int i = 0; i < (1 << 22) && h.giving_up.load(std::memory_order_acquire) != 0 &&
                  h.broken.load(std::memory_order_acquire) == 0;
       ++i) {
    cpu_relax();
  }
}

bool NodeGroup::intact() const { return header().broken.load(std::memory_order_acquire) == 0; }

void NodeGroup::check_broken() const {
  if (header().broken.load(std::memory_order_acquire) != 0) [[unlikely]]
    throw_broken();
}

void NodeGroup::throw_broken() const {
  Header& h = header();
  // The process that broke the node is writing why; it takes microseconds
  // (unless it died meanwhile: then go on with what it wrote).
  for (int i = 0; i < (1 << 22) && h.broken.load(std::memory_order_acquire) != 2; ++i) {
    cpu_relax();
  }
  abandon();
  throw_error(ErrorKind::unusable,
              broken_team_message(
                  to_string(kind_),
                  std::string_view(h.broken_text, strnlen(h.broken_text, sizeof h.broken_text))));
}

void NodeGroup::break_node(const std::string& text) const {
  Header& h = header();
  std::uint32_t expected = 0;
  if (h.broken.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    copy_text(h.broken_text, sizeof h.broken_text, text.c_str());
    h.broken.store(2, std::memory_order_release);
  }
  abandon();
  throw_error(ErrorKind::unusable, with_way_back(text));
}

void NodeGroup::restart() {
  ProcessArea& mine = area(rank_);
  for (Slot& slot : mine.slot) {
    slot.seq.store(0, std::memory_order_relaxed);
    slot.signature = slot.digest = 0;
    slot.failed = slot.payload_bytes = slot.inclusive = slot.ran_ahead = 0;
  }
  mine.staged.store(0, std::memory_order_relaxed);
  mine.folded.store(0, std::memory_order_relaxed);
  mine.drained.store(0, std::memory_order_relaxed);
  mine.compared.store(0, std::memory_order_relaxed);
  mine.released.store(0, std::memory_order_relaxed);
  mine.fold_failed = 0;
  ops_ = steps_ = compared_ = everyone_announced_ = digest_ = 0;
  announced_ = {};
  cut_balance_.reset();
  std::fill(std::begin(last_signature_), std::end(last_signature_), ~0ull);
  for (auto& by_size : mine.measured) {
    for (MeasuredClass& figures : by_size) {
      for (int w = 0; w < 2; ++w) {
        figures.ticks[w].store(0, std::memory_order_relaxed);
        figures.calls[w].store(0, std::memory_order_relaxed);
        figures.run[w].store(0, std::memory_order_relaxed);
        figures.last[w].store(0, std::memory_order_relaxed);
      }
    }
  }
  std::fill(std::begin(measured_next_steer_), std::end(measured_next_steer_), 0);
  for (auto& by_size : measured_remeasure_)
    std::fill(std::begin(by_size), std::end(by_size), Remeasure{});
  if (rank_ == 0) {
    Header& h = header();
    for (auto& verdict : h.way_verdicts) verdict.store(0, std::memory_order_relaxed);
    std::fill(std::begin(h.broken_text), std::end(h.broken_text), '\0');
    h.giving_up.store(0, std::memory_order_relaxed);
    h.broken.store(0, std::memory_order_release);
  }
}

void NodeGroup::abandon() const {
  // After `broken`, so that whoever sees one of these words also sees it.
  ProcessArea& mine = area(rank_);
  for (Slot& slot : mine.slot) publish(slot.seq, kEndOfWords);
  publish(mine.staged, kEndOfWords);
  publish(mine.folded, kEndOfWords);
  publish(mine.drained, kEndOfWords);
  publish(mine.released, kEndOfWords);
}

// Two agreements: the first makes every process's description, pid and
// probe word visible; after it each tries the others' memory and the
// asymmetric fence, and the second makes the answers visible, so that all
// switch alike.
Failure NodeGroup::describe(const std::string& mine, const std::string& staging) {
  ProcessArea& me = area(rank_);
  copy_text(me.description, sizeof me.description, mine.c_str());
  copy_text(me.staging_request, sizeof me.staging_request, staging.c_str());
  // Writable, so the others can try writing it too (the value it holds).
  static std::uint64_t probe = kReachProbe;
  const bool exposed = peer_memory_->expose();
  me.probe_address = reinterpret_cast<std::uint64_t>(&probe);
  me.wants_race = single_copy_setting_ == SingleCopySetting::race ? 1 : 2;
  NodeCallInfo info;
  info.signature = 0x646573637269ull;  // every process describes itself alike
  info.kind = CollectiveKind::barrier;
  info.type_name = info.op_name = "none";
  if (Failure failure = agree(info)) return failure;
  me.probe_ok = exposed && reaches_every_peer() ? 1 : 2;
  me.race_known = known_race_verdict();
  me.light_publish_ok = use_asymmetric_fence() ? 1 : 2;
  info.signature = 0x70726f6265ull;
  if (Failure failure = agree(info)) return failure;
  single_copy_ = true;
  bool light = true, race = false;
  for (int q = 0; q < size_; ++q) {
    single_copy_ = single_copy_ && area(q).probe_ok == 1;
    light = light && area(q).light_publish_ok == 1;
    race = race || area(q).wants_race == 1;
  }
  // Every process switches here, after the same agreement: whatever any of
  // them publishes from now on, the others wait for with the switch made.
  light_publish_ = light;
  // Only two processes take the single copy (node_way); where any said
  // `auto`, they race it against the chunks first.
  if (single_copy_ && size_ == 2 && race) return race_single_copy();
  return {};
}

// Reading and writing back every other process's probe word tells whether
// the kernel (or a seccomp policy) lets this process reach their memory;
// all use the single copy only if all can.
bool NodeGroup::reaches_every_peer() {
  if (size_ < 2 || single_copy_setting_ == SingleCopySetting::off) return false;
  peers_.clear();
  peers_.resize(static_cast<std::size_t>(size_));
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    auto& peer = peers_[static_cast<std::size_t>(q)];
    peer = peer_memory_->endpoint(pid(q));
    void* theirs = reinterpret_cast<void*>(area(q).probe_address);
    std::uint64_t word = 0;
    std::string why;
    if (!peer->copy_from(theirs, &word, sizeof word, why) || word != kReachProbe ||
        !peer->copy_to(theirs, &word, sizeof word, why)) {
      return false;
    }
  }
  return true;
}

Failure NodeGroup::reduce(const NodeCallInfo& info, const NodeReduction& r) {
  LevelScope scope(CallLevel::node_segment);
  const std::size_t bytes = r.count * r.op->elem_size;
  const NodeWay way = node_way(info.kind, bytes, r.op->elem_size, r.op->may_throw, shape());
  const MeasuredCall measured = measured_call(info.kind, bytes, r.op->elem_size, way);
  if (measured.kind < 0) return reduce_by(way, info, r);
  // Every process reads, for this operation, the classes the others read
  // (way_by_measure.hpp says why).
  const bool single = takes_single_copy(measured, ops_ + 1);
  const std::uint64_t start = measured_ticks();
  Failure failure = reduce_by(single ? NodeWay::single_copy : streamed_way(way), info, r);
  if (!failure) record_way(measured, single, ticks_per_64k(measured_ticks() - start, bytes));
  return failure;
}

Failure NodeGroup::reduce_by(NodeWay way, const NodeCallInfo& info, const NodeReduction& r) {
  if (way == NodeWay::inline_announcement) return reduce_inline(info, r);
  // The chunks or the single copy: each process says where its buffers lie,
  // for either way of reaching them in place.
  SharedPlaces places;
  PeerAddresses addresses;
  if (!info.failure) {
    places = shared_places(r);
    addresses = peer_addresses(r);
  }
  Announcement announcement;
  announcement.inclusive = r.prefix != nullptr && r.inclusive;
  announcement.places = &places;
  announcement.addresses = &addresses;
  if (Failure failure = announce_and_agree(info, announcement); failure || r.count == 0) {
    return failure;
  }
  const SingleCopyPlan plan = way == NodeWay::single_copy ? single_copy_plan(r) : SingleCopyPlan{};
  return plan.way != SingleCopyPlan::Way::none ? reduce_single_copy(r, plan) : reduce_chunked(r);
}

}  // namespace hreduce::detail
