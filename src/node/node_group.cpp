#include "src/node/node_group.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

#include "hreduce/error.hpp"
#include "src/common/copy.hpp"
#include "src/common/environment.hpp"
#include "src/common/exception_text.hpp"
#include "src/common/failure.hpp"
#include "src/common/fold.hpp"
#include "src/common/hash.hpp"
#include "src/common/level_clock.hpp"
#include "src/node/asymmetric_fence.hpp"
#include "src/node/cross_memory.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/shared_wait.hpp"

namespace hreduce::detail {
namespace {

std::size_t round_chunk(std::size_t chunk) {
  return std::max<std::size_t>(4096, (chunk + 4095) / 4096 * 4096);
}

// The value a process leaves in each of its progress words when it breaks
// the node (abandon()), so that nobody waits for it any more.
constexpr std::uint64_t kEndOfWords = ~std::uint64_t{0};

void copy_text(char* to, std::size_t capacity, const char* from) {
  std::strncpy(to, from ? from : "", capacity - 1);
  to[capacity - 1] = '\0';
}

// Elements of one slice: a chunk of m elements split over P processes,
// slices starting on cache lines where the element size allows.
std::size_t slice_elements(std::size_t m, int P, std::size_t es) {
  return std::max<std::size_t>(whole_lines((m + P - 1) / P, es), 1);
}

}  // namespace

// (__builtin_prefetch wants the read/write choice as a constant.)
template <int kWrite>
void NodeGroup::prefetch_slot(const Slot& slot, std::size_t payload_bytes) {
  __builtin_prefetch(&slot, kWrite);
  if (payload_bytes > sizeof slot.short_payload) {
    for (std::size_t line = 0; line < payload_bytes; line += 64) {
      __builtin_prefetch(slot.payload + line, kWrite);
    }
  }
}

int NodeGroup::buffers(int processes, std::size_t chunk_bytes) {
  const std::size_t per_buffer =
      (static_cast<std::size_t>(processes) + 1) * round_chunk(chunk_bytes);
  return static_cast<int>(std::clamp<std::size_t>(kNodeRingBytes / per_buffer, 2, kNodeMaxBuffers));
}

std::size_t NodeGroup::segment_bytes(int processes, std::size_t chunk_bytes) {
  return Layout::stages(processes) + (static_cast<std::size_t>(processes) + 1) *
                                         static_cast<std::size_t>(buffers(processes, chunk_bytes)) *
                                         round_chunk(chunk_bytes);
}

NodeGroup::NodeGroup(SharedSegment segment, int rank, int size, int first_process,
                     std::size_t chunk_bytes, std::chrono::milliseconds timeout, bool crowded,
                     bool run_ahead)
    : segment_(std::move(segment)), rank_(rank), size_(size), first_process_(first_process),
      chunk_(round_chunk(chunk_bytes)),
      inline_bytes_(node_inline_bytes(size, CollectiveKind::allreduce)),
      inline_reduce_bytes_(node_inline_bytes(size, CollectiveKind::reduce)),
      buffers_(static_cast<std::uint64_t>(buffers(size, chunk_bytes))), timeout_(timeout),
      spins_(crowded ? kSpinsShared : kSpinsAlone),
      keep_polling_(crowded ? std::chrono::microseconds(0) : std::chrono::microseconds(1000)),
      run_ahead_(run_ahead && size > 1), accumulator_(chunk_), scratch_(chunk_) {
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

NodeGroup::ProcessArea& NodeGroup::area(int rank) const {
  auto* base = static_cast<std::byte*>(segment_.data()) + Layout::areas();
  return reinterpret_cast<ProcessArea*>(base)[rank];
}

std::byte* NodeGroup::stage(int rank, int buffer) const {
  return static_cast<std::byte*>(segment_.data()) + Layout::stages(size_) +
         (static_cast<std::size_t>(rank) * buffers_ + static_cast<std::size_t>(buffer)) * chunk_;
}

std::byte* NodeGroup::result(int buffer) const { return stage(size_, 0) + buffer * chunk_; }

NodeGroup::Header& NodeGroup::header() const { return *static_cast<Header*>(segment_.data()); }

void NodeGroup::publish(std::atomic<std::uint64_t>& word, std::uint64_t value) const {
  shared_publish(word, value, header().sleepers, light_publish_);
}

void NodeGroup::wait(const std::atomic<std::uint64_t>& word, std::uint64_t target, int rank,
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
  throw_marked(broken_team_message(
                   to_string(kind_),
                   std::string_view(h.broken_text, strnlen(h.broken_text, sizeof h.broken_text))),
               ErrorKind::unusable, true);
}

void NodeGroup::break_node(const std::string& text) const {
  Header& h = header();
  std::uint32_t expected = 0;
  if (h.broken.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    copy_text(h.broken_text, sizeof h.broken_text, text.c_str());
    h.broken.store(2, std::memory_order_release);
  }
  abandon();
  throw_marked(with_way_back(text), ErrorKind::unusable, true);
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
  std::fill(std::begin(last_signature_), std::end(last_signature_), ~0ull);
  if (rank_ == 0) {
    Header& h = header();
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

void NodeGroup::wait_for_slot(std::uint64_t op) {
  const std::uint64_t target = op - kNodeSlots + 1;
  // Running ahead, this process would otherwise look at the others' lines
  // on every operation, and each look costs the writer a cache miss on its
  // next announcement: when it has to wait, it waits for half the slots
  // at once. That cannot hang: this process has announced every operation
  // before op, so the others reach op - kNodeSlots / 2 without it.
  const std::uint64_t ample = op - kNodeSlots / 2;
  std::uint64_t known = ample;
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const Slot* slots = area(q).slot;
    const std::uint64_t seen = slots[ample % kNodeSlots].seq.load(std::memory_order_acquire);
    if (seen >= ample) continue;
    if (slots[target % kNodeSlots].seq.load(std::memory_order_acquire) >= target) {
      known = std::min(known, target);
      continue;
    }
    wait(slots[ample % kNodeSlots].seq, ample, q,
         "leave the operation whose announcement slot this one reuses");
  }
  everyone_announced_ = known;
}

std::string NodeGroup::announce_and_agree(const NodeCallInfo& info, const void* payload,
                                          std::size_t payload_bytes, bool inclusive,
                                          const Direct* direct, bool contributes_only) {
  kind_ = info.kind;
  deadline_ = Deadline::after(timeout_);
  check_broken();
  const std::uint64_t op = ++ops_;
  if (op >= kNodeSlots && everyone_announced_ < op - kNodeSlots + 1) wait_for_slot(op);
  const int s = static_cast<int>(op % kNodeSlots);
  const bool runs_ahead = contributes_only && run_ahead_ && recently_compared(op);
  Slot& mine = area(rank_).slot[s];
  mine.signature = info.signature;
  mine.digest = digest_;
  digest_ = mix(digest_, info.signature);
  mine.ran_ahead = runs_ahead;
  mine.failed = info.failure != nullptr;
  if (info.failure != nullptr) copy_text(mine.failure, sizeof mine.failure, info.failure);
  if (last_signature_[s] != info.signature) {
    last_signature_[s] = info.signature;
    mine.count = info.count;
    mine.root = info.root;
    mine.kind = static_cast<std::int32_t>(info.kind);
    copy_text(mine.type_name, sizeof mine.type_name, info.type_name);
    copy_text(mine.op_name, sizeof mine.op_name, info.op_name);
  }
  mine.payload_bytes = static_cast<std::uint32_t>(payload_bytes);
  mine.inclusive = inclusive;
  // Only chunked operations read it, and it takes a line of its own.
  if (direct != nullptr) mine.direct = *direct;
  if (payload_bytes > 0) copy_bytes(mine.payload_for(payload_bytes), payload, payload_bytes);
  publish(mine.seq, op);
  // The next announcement's lines, taken back from the cores that read them
  // while nobody waits for them yet: that write then finds them here.
  // (The cut-off stays out here: moved into prefetch_slot as a flag, it
  // made a 16 KiB allreduce measurably slower, for reasons not found.)
  const bool long_payload = payload_bytes > kNodePrefetchedPayload;
  prefetch_slot<kForWriting>(area(rank_).slot[(op + 1) % kNodeSlots],
                             runs_ahead && long_payload ? 0 : payload_bytes);
  if (runs_ahead) return {};
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const Slot& theirs = area(q).slot[s];
    // Usually there already (the others ran ahead or came first): then
    // neither the wait nor its look at `broken` (an announcement that was
    // written is no broken node's end value).
    const std::uint64_t seen = theirs.seq.load(std::memory_order_acquire);
    if (seen < op || seen == kEndOfWords) [[unlikely]] {
      wait(theirs.seq, op, q, "announce the same operation");
    }
    // A process that ran ahead has likely announced the next operation
    // too: its lines come over while this one finishes, not when the next
    // one waits for them.
    if (theirs.ran_ahead != 0) {
      const std::size_t next_bytes = theirs.payload_bytes;
      prefetch_slot<kForReading>(area(q).slot[(op + 1) % kNodeSlots],
                                 next_bytes > kNodePrefetchedPayload ? 0 : next_bytes);
    }
  }
  // Every announcement was there without waiting, yet the others may have
  // given up on this operation already (this process came after their
  // timeout), or be deciding to right now: it fails here too.
  settle_give_ups();
  check_broken();
  everyone_announced_ = compared_ = op;
  std::string text;
  if (!all_agree(s)) [[unlikely]]
    text = compare_announcements(info);
  area(rank_).compared.store(op, std::memory_order_relaxed);
  return text;
}

bool NodeGroup::all_agree(int s) const {
  const Slot& first = area(0).slot[s];
  bool agreed = true;
  for (int q = 0; q < size_; ++q) {
    const Slot& theirs = area(q).slot[s];
    agreed &= (theirs.failed == 0) & (theirs.signature == first.signature) &
              (theirs.digest == first.digest);
  }
  return agreed;
}

bool NodeGroup::recently_compared(std::uint64_t op) {
  if (op - compared_ < kNodeSlots - 1) return true;
  // A process that receives (a reduce's root, the last of a scan) compares
  // on every operation: one look at its word usually lets this one go on.
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    compared_ = std::max(compared_, area(q).compared.load(std::memory_order_relaxed));
  }
  return op - compared_ < kNodeSlots - 1;
}

std::string NodeGroup::compare_announcements(const NodeCallInfo& info) {
  // Called when all_agree() did not: say how they differ.
  const int s = static_cast<int>(ops_ % kNodeSlots);
  std::string text;
  for (int q = 0; q < size_ && text.empty(); ++q) {
    const Slot& theirs = area(q).slot[s];
    if (theirs.failed) {
      text = std::string(to_string(info.kind)) + ": process " + std::to_string(first_process_ + q) +
             " failed: " + theirs.failure;
    }
  }
  bool earlier = false;
  for (int q = 1; q < size_; ++q) {
    if (text.empty() && area(q).slot[s].signature != area(0).slot[s].signature) {
      text = disagreement(info);
    }
    earlier = earlier || area(q).slot[s].digest != area(0).slot[s].digest;
  }
  bool anyone_ran_ahead = false;
  for (int q = 0; q < size_; ++q) {
    anyone_ran_ahead = anyone_ran_ahead || area(q).slot[s].ran_ahead != 0;
  }
  if (!earlier && (text.empty() || !anyone_ran_ahead)) {
    // Every process is here and knows: all start their digests afresh alike.
    if (!text.empty()) digest_ = mix(0, ops_);
    return text;
  }
  std::string ran_ahead;
  for (int q = 0; q < size_; ++q) {
    if (area(q).slot[s].ran_ahead != 0) {
      ran_ahead += (ran_ahead.empty() ? "" : ", ") + std::to_string(first_process_ + q);
    }
  }
  if (text.empty()) text = to_string(info.kind);
  if (earlier) {
    text += std::string(text.find(':') == std::string::npos ? ": " : "; ") +
            "the processes disagreed in an earlier call that every process left without waiting "
            "(each only contributed to it)";
  }
  if (!ran_ahead.empty()) {
    text += "; process(es) " + ran_ahead +
            " had already returned from this call, having only contributed to it";
  }
  break_node(text + "; the team is no longer usable");
}

std::string NodeGroup::disagreement(const NodeCallInfo& info) const {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  const Slot& first = area(0).slot[s];
  auto said = [&](int q) {
    const Slot& slot = area(q).slot[s];
    std::string text = "process " + std::to_string(first_process_ + q) + " called " +
                       to_string(static_cast<CollectiveKind>(slot.kind)) + " with count " +
                       std::to_string(slot.count);
    if (static_cast<CollectiveKind>(slot.kind) == CollectiveKind::reduce) {
      text += ", root " + std::to_string(slot.root);
    }
    return text + ", element type " + slot.type_name + ", op " + slot.op_name;
  };
  std::string text = std::string(to_string(info.kind)) + ": processes disagree on the call: ";
  for (int q = 1; q < size_; ++q) {
    if (area(q).slot[s].signature == first.signature) continue;
    const std::string theirs = said(q), reference = said(0);
    text += reference + "; " + theirs;
    if (theirs.substr(theirs.find(" called")) == reference.substr(reference.find(" called"))) {
      text += " (they differ in the reduce_scatter counts or the options)";
    }
    break;
  }
  return text;
}

std::string NodeGroup::agree(const NodeCallInfo& info) {
  LevelScope scope(CallLevel::node_segment);
  return announce_and_agree(info, nullptr, 0);
}

std::string NodeGroup::reduce(const NodeCallInfo& info, const NodeReduction& r) {
  LevelScope scope(CallLevel::node_segment);
  const std::size_t bytes = r.count * r.op->elem_size;
  const NodeWay way = node_way(info.kind, bytes, r.op->elem_size, r.op->may_throw, shape());
  if (way == NodeWay::inline_announcement) {
    // A process that failed already may have no input to offer.
    const bool healthy = info.failure == nullptr;
    // Copying an input that nobody reads into the announcement cost the
    // process that waits for the others (an exscan's last, a reduce's
    // root) a third of a 16 KiB call on two processes.
    const bool kept_input = healthy && keeps_input(r);
    const bool offers = healthy && !kept_input;
    // The first process's inclusive prefix is its own input.
    const bool own_prefix = r.prefix != nullptr && r.inclusive && rank_ == 0;
    const bool contributes_only =
        r.may_run_ahead && healthy && r.out_hi == r.out_lo && (!receives_prefix(r) || own_prefix);
    std::string failure =
        announce_and_agree(info, offers ? r.in : nullptr, offers ? bytes : 0,
                           r.prefix != nullptr && r.inclusive, nullptr, contributes_only);
    if (!failure.empty() || r.count == 0) return failure;
    return reduce_small(r, kept_input);
  }
  Direct direct;
  if (info.failure == nullptr) {
    direct.wants_total = r.out_hi > r.out_lo;
    direct.in = find_allocation(r.in, bytes);
    // Folders of other slices write an output in place while the input is
    // still read in place: one over the input anywhere but at the same
    // elements (reduce_scatter in place) goes through the drain instead.
    auto clashes = [&](const Place& out, std::size_t out_bytes, std::uint64_t same_at) {
      return direct.in.allocation >= 0 && out.allocation == direct.in.allocation &&
             out.offset < direct.in.offset + bytes && direct.in.offset < out.offset + out_bytes &&
             out.offset != same_at;
    };
    if (receives_prefix(r)) {
      direct.prefix = find_allocation(r.prefix, bytes);
      if (clashes(direct.prefix, bytes, direct.in.offset)) direct.prefix = {};
    }
    if (r.out_hi > r.out_lo && r.prefix == nullptr) {
      const std::size_t out_bytes = (r.out_hi - r.out_lo) * r.op->elem_size;
      direct.out = find_allocation(r.out, out_bytes);
      direct.out_lo = r.out_lo;
      direct.out_hi = r.out_hi;
      const std::uint64_t same_at = direct.in.offset + r.out_lo * r.op->elem_size;
      if (clashes(direct.out, out_bytes, same_at)) direct.out = {};
    }
    direct.input_address = reinterpret_cast<std::uint64_t>(r.in);
    direct.output_address = reinterpret_cast<std::uint64_t>(r.out);
    direct.prefix_address = reinterpret_cast<std::uint64_t>(r.prefix);
    direct.total = r.out_hi == r.out_lo ? 0 : r.out_lo == 0 && r.out_hi == r.count ? 1 : 2;
  }
  std::string failure =
      announce_and_agree(info, nullptr, 0, r.prefix != nullptr && r.inclusive, &direct, false);
  if (!failure.empty() || r.count == 0) return failure;
  const SingleCopyPlan plan = way == NodeWay::single_copy ? single_copy_plan(r) : SingleCopyPlan{};
  return plan.way != SingleCopyPlan::Way::none ? reduce_single_copy(r, plan) : reduce_chunked(r);
}

bool NodeGroup::keeps_input(const NodeReduction& r) const {
  if (!r.input_private) return false;
  const std::size_t bytes = r.count * r.op->elem_size;
  const auto* in = static_cast<const std::byte*>(r.in);
  // The fold into `to` reads this process's input in its first pass (rank
  // 0 or 1: x_0 ∘ x_1 elementwise, into `to` even where that is the input
  // itself), or in a later pass, after the first has written `to`.
  auto reads_it_first = [&](const void* to, std::size_t lo, std::size_t hi) {
    const auto* t = static_cast<const std::byte*>(to);
    const std::size_t to_bytes = (hi - lo) * r.op->elem_size;
    const bool apart = t + to_bytes <= in || in + bytes <= t;
    return apart || (rank_ <= 1 && t == in + lo * r.op->elem_size);
  };
  if (r.out_hi > r.out_lo && !reads_it_first(r.out, r.out_lo, r.out_hi)) return false;
  // An exclusive prefix leaves this process's own input out.
  if (receives_prefix(r) && r.inclusive && !reads_it_first(r.prefix, 0, r.count)) return false;
  return true;
}

std::string NodeGroup::reduce_small(const NodeReduction& r, bool kept_input) {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  const std::size_t es = r.op->elem_size;
  auto input = [&](int q) {
    return q == rank_ && kept_input ? static_cast<const std::byte*>(r.in)
                                    : area(q).slot[s].payload_data();
  };
  // out[0, m) = x_0 ∘ … ∘ x_{upto-1} over elements [lo, lo + m).
  auto fold = [&](void* out, int upto, std::size_t lo, std::size_t m) {
    auto from_lo = [&](int q) { return input(q) + lo * es; };
    fold_in_rank_order(*r.op, upto, from_lo, out, m);
  };
  if (r.out_hi > r.out_lo) fold(r.out, size_, r.out_lo, r.out_hi - r.out_lo);
  if (!receives_prefix(r)) return {};
  const int upto = r.inclusive ? rank_ + 1 : rank_;
  // The prefix that is one process's input (an exscan's second process, a
  // scan's first) is a copy of a few bytes: inline here, cheaper than the
  // call into the fold (which would copy it too).
  if (upto == 1) {
    copy_if_distinct(r.prefix, input(0), r.count * es);
  } else {
    fold(r.prefix, upto, 0, r.count);
  }
  return {};
}

void NodeGroup::fold_slice(const NodeReduction& r, int buffer, std::size_t c0, std::size_t lo,
                           std::size_t hi) {
  const std::size_t es = r.op->elem_size;
  const std::size_t m = hi - lo, offset = lo * es;
  const int s = static_cast<int>(ops_ % kNodeSlots);
  std::byte* total = result(buffer) + offset;
  // This process did not stage its own slice (reduce_chunked).
  auto in = [&](int q) -> const std::byte* {
    const Direct& d = area(q).slot[s].direct;
    if (d.in.allocation >= 0) return at(q, d.in) + (c0 + lo) * es;
    if (q == rank_) return bytes_at(r.in, c0 + lo, es);
    return stage(q, buffer) + offset;
  };
  if (r.prefix == nullptr) {
    fold_in_rank_order(*r.op, size_, in, total, m);
    // Outputs in shared memory get their part of the slice now, while it
    // is in this core's cache.
    for (int q = 0; q < size_; ++q) {
      const Direct& d = area(q).slot[s].direct;
      if (d.out.allocation < 0) continue;
      const std::size_t a = std::max<std::size_t>(d.out_lo, c0 + lo);
      const std::size_t b = std::min<std::size_t>(d.out_hi, c0 + hi);
      if (a < b)
        copy_bytes(at(q, d.out) + (a - d.out_lo) * es, total + (a - c0 - lo) * es, (b - a) * es);
    }
    // And this process's own private output, which its drain then skips.
    // Only when its input was staged: an output over an input that others
    // still read in place (reduce_scatter in place) must wait for them.
    const Direct& own = area(rank_).slot[s].direct;
    if (own.out.allocation < 0 && own.in.allocation < 0) {
      const std::size_t a = std::max(r.out_lo, c0 + lo), b = std::min(r.out_hi, c0 + hi);
      if (a < b) {
        copy_bytes(bytes_at(r.out, a - r.out_lo, es), total + (a - c0 - lo) * es, (b - a) * es);
      }
    }
    return;
  }
  // Scan: process q's prefix x_0 ∘ … ∘ x_{q-1} (or … ∘ x_q when it asked
  // for its inclusive prefix) goes to its output when that is in shared
  // memory, else to stage[q] for it to drain; result gets the node's total.
  // This process's own prefix goes straight to its private output when
  // its input was staged (as for reductions above); its drain skips it.
  const bool own_private = writes_own_prefix(r);
  auto prefix_of = [&](int q) {
    const Direct& d = area(q).slot[s].direct;
    if (d.prefix.allocation >= 0) return at(q, d.prefix) + (c0 + lo) * es;
    if (q == rank_ && own_private) return bytes_at(r.prefix, c0 + lo, es);
    return stage(q, buffer) + offset;
  };
  auto inclusive = [&](int q) { return area(q).slot[s].inclusive != 0; };
  // Process 0's inclusive prefix is its input: staged, it is in place.
  if (inclusive(0)) copy_if_distinct(prefix_of(0), in(0), m * es);
  // Without a total or an inclusive last prefix (exscan on one node) the
  // last process's input is neither staged nor read.
  const bool last_read = last_input_read();
  if (size_ == 1) {
    if (last_read) copy_bytes(total, in(0), m * es);
    return;
  }
  const bool total_wanted = anyone_wants_total();
  // left = x_0 ∘ … ∘ x_{q-1} over the slice, in place where it can be:
  // every copy or write left out here is one less line taken from
  // another core (two processes' scan: a quarter off at 1 MiB).
  const std::byte* left = in(0);
  std::byte* spare = accumulator_.data();
  std::byte* other_spare = scratch_.data();
  for (int q = 1; q < size_; ++q) {
    const bool last = q + 1 == size_;
    if (last && !last_read) {
      copy_bytes(prefix_of(q), left, m * es);
      break;
    }
    // The last fold is the node's total, which only some may want; else
    // it is only the last process's inclusive prefix.
    std::byte* upto_q = !last ? spare : total_wanted ? total : prefix_of(q);
    r.op->apply(left, in(q), upto_q, m);
    if (inclusive(q)) {
      copy_if_distinct(prefix_of(q), upto_q, m * es);
    } else {
      copy_bytes(prefix_of(q), left, m * es);
    }
    left = upto_q;
    if (!last) std::swap(spare, other_spare);
  }
}

bool NodeGroup::anyone_wants_total() const {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  for (int q = 0; q < size_; ++q) {
    if (area(q).slot[s].direct.wants_total != 0) return true;
  }
  return false;
}

bool NodeGroup::last_input_read() const {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  return area(size_ - 1).slot[s].inclusive != 0 || anyone_wants_total();
}

bool NodeGroup::writes_own_prefix(const NodeReduction& r) const {
  const Direct& own = area(rank_).slot[ops_ % kNodeSlots].direct;
  return receives_prefix(r) && own.prefix.allocation < 0 && own.in.allocation < 0;
}

std::string NodeGroup::reduce_chunked(const NodeReduction& r) {
  const std::size_t es = r.op->elem_size;
  const std::size_t per_chunk = chunk_ / es;
  if (per_chunk == 0) {
    throw ArgumentError(std::string(to_string(kind_)) + ": an element of " + std::to_string(es) +
                        " bytes is larger than the node level's chunk of " +
                        std::to_string(chunk_));
  }
  ProcessArea& mine = area(rank_);
  const Direct& direct = mine.slot[ops_ % kNodeSlots].direct;
  const bool direct_in = direct.in.allocation >= 0, direct_out = direct.out.allocation >= 0;
  const bool unread_input = r.prefix != nullptr && last() && !last_input_read();
  bool failed = false;
  const std::size_t chunks = (r.count + per_chunk - 1) / per_chunk;
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::uint64_t step = steps_ + c + 1;
    const int buffer = static_cast<int>(step % buffers_);
    const std::size_t c0 = c * per_chunk, c1 = std::min(r.count, c0 + per_chunk);
    const std::size_t m = c1 - c0;
    const std::size_t share = slice_elements(m, size_, es);
    const std::size_t lo = std::min(m, rank_ * share), hi = std::min(m, lo + share);
    if (!direct_in && !unread_input) {
      if (step > buffers_) {
        wait_all(&ProcessArea::folded, step - buffers_, "fold an earlier chunk");
      }
      // Only what the others fold: this process folds its own slice from
      // its input (fold_slice), a copy of a P-th of the chunk saved.
      copy_bytes(stage(rank_, buffer), bytes_at(r.in, c0, es), lo * es);
      copy_bytes(stage(rank_, buffer) + hi * es, bytes_at(r.in, c0 + hi, es), (m - hi) * es);
    }
    publish(mine.staged, step);
    wait_all(&ProcessArea::staged, step, "stage its chunk");
    if (step > buffers_) {
      wait_all(&ProcessArea::drained, step - buffers_, "drain an earlier chunk");
    }
    if (lo < hi && !failed) {
      try {
        fold_slice(r, buffer, c0, lo, hi);
      } catch (...) {
        failed = true;
        copy_text(mine.fold_failure, sizeof mine.fold_failure, current_exception_text());
      }
      if (failed) mine.fold_failed = ops_;  // released by `folded` below
    }
    publish(mine.folded, step);
    wait_all(&ProcessArea::folded, step, "fold its slice");
    const std::size_t a = std::max(r.out_lo, c0), b = std::min(r.out_hi, c1);
    if (a < b && !direct_out) {
      // Around the slice this process folded: that part it wrote already.
      const bool wrote_own = r.prefix == nullptr && lo < hi && !direct_in;
      const std::size_t own_lo = wrote_own ? std::clamp(c0 + lo, a, b) : b;
      const std::size_t own_hi = wrote_own ? std::clamp(c0 + hi, a, b) : b;
      auto drain = [&](std::size_t from, std::size_t to) {
        if (from < to) {
          copy_bytes(bytes_at(r.out, from - r.out_lo, es), result(buffer) + (from - c0) * es,
                     (to - from) * es);
        }
      };
      drain(a, own_lo);
      drain(own_hi, b);
    }
    if (receives_prefix(r) && direct.prefix.allocation < 0) {
      // Around the slice this process folded, if it wrote its prefix there.
      const bool wrote_own = writes_own_prefix(r) && lo < hi && !failed;
      const std::size_t own_lo = wrote_own ? lo : m, own_hi = wrote_own ? hi : m;
      std::byte* prefix = bytes_at(r.prefix, c0, es);
      copy_bytes(prefix, stage(rank_, buffer), own_lo * es);
      if (own_hi < m) {
        copy_bytes(prefix + own_hi * es, stage(rank_, buffer) + own_hi * es, (m - own_hi) * es);
      }
    }
    publish(mine.drained, step);
  }
  steps_ += chunks;
  for (int q = 0; q < size_; ++q) {
    if (area(q).fold_failed == ops_) {
      return marked(ErrorKind::op, std::string(to_string(kind_)) + ": the op threw in process " +
                                       std::to_string(first_process_ + q) + ": " +
                                       area(q).fold_failure);
    }
  }
  return {};
}

std::string NodeGroup::describe(const std::string& mine) {
  ProcessArea& me = area(rank_);
  copy_text(me.description, sizeof me.description, mine.c_str());
  // Writable, so the others can try writing it too (the value it holds).
  static std::uint64_t probe = 0x68726564756365ull;
  allow_cross_memory_reads();
  me.probe_address = reinterpret_cast<std::uint64_t>(&probe);
  NodeCallInfo info;
  info.signature = 0x646573637269ull;  // every process describes itself alike
  info.kind = CollectiveKind::barrier;
  info.type_name = info.op_name = "none";
  if (std::string failure = agree(info); !failure.empty()) return failure;
  // Reading and writing back every other process's word tells whether the
  // kernel (or a seccomp policy) lets this process reach their memory; all
  // use the single-copy path only if all can.
  bool can_reach = size_ > 1 && flag_from_environment("HREDUCE_NODE_SINGLE_COPY", true);
  for (int q = 0; q < size_ && can_reach; ++q) {
    if (q == rank_) continue;
    void* theirs = reinterpret_cast<void*>(area(q).probe_address);
    std::uint64_t word = 0;
    std::string why;
    can_reach = read_process_memory(pid(q), theirs, &word, sizeof word, why) && word == probe &&
                write_process_memory(pid(q), theirs, &word, sizeof word, why);
  }
  me.probe_ok = can_reach ? 1 : 2;
  me.light_publish_ok =
      flag_from_environment("HREDUCE_NODE_ASYMMETRIC_FENCE", true) && register_asymmetric_fence()
          ? 1
          : 2;
  info.signature = 0x70726f6265ull;
  if (std::string failure = agree(info); !failure.empty()) return failure;
  single_copy_ = true;
  bool light = true;
  for (int q = 0; q < size_; ++q) {
    single_copy_ = single_copy_ && area(q).probe_ok == 1;
    light = light && area(q).light_publish_ok == 1;
  }
  // Every process switches here, after the same agreement: whatever any of
  // them publishes from now on, the others wait for with the switch made.
  light_publish_ = light;
  return {};
}

std::string NodeGroup::description(int rank) const {
  const char* text = area(rank).description;
  return std::string(text, strnlen(text, sizeof area(rank).description));
}

int NodeGroup::pid(int rank) const { return area(rank).pid.load(std::memory_order_relaxed); }

void* NodeGroup::allocate(Channel& node, std::size_t bytes) {
  // Every process maps every process's allocation; the k-th allocation of
  // each process is allocation k everywhere, since all call this in step.
  const std::size_t mapped = std::max<std::size_t>(4096, (bytes + 4095) / 4096 * 4096);
  if (peers_.empty()) peers_.resize(static_cast<std::size_t>(size_));
  for (int q = 0; q < size_; ++q) {
    peers_[static_cast<std::size_t>(q)].push_back(
        SharedSegment::for_node(node, q == rank_ ? mapped : 0, q));
  }
  return peers_[static_cast<std::size_t>(rank_)].back().data();
}

NodeGroup::Place NodeGroup::find_allocation(const void* data, std::size_t bytes) const {
  if (peers_.empty() || data == nullptr) return {};
  const auto* p = static_cast<const std::byte*>(data);
  const auto& mine = peers_[static_cast<std::size_t>(rank_)];
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const auto* base = static_cast<const std::byte*>(mine[k].data());
    if (p >= base && p + bytes <= base + mine[k].size()) {
      return {static_cast<std::int32_t>(k), static_cast<std::uint64_t>(p - base)};
    }
  }
  return {};
}

std::byte* NodeGroup::at(int rank, const Place& place) const {
  const SharedSegment& segment =
      peers_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(place.allocation)];
  return static_cast<std::byte*>(segment.data()) + place.offset;
}

std::string NodeGroup::broadcast(const NodeCallInfo& info, void* data, std::size_t bytes,
                                 int root) {
  LevelScope scope(CallLevel::node_segment);
  const bool small = bytes <= inline_bytes_;
  const bool sends = rank_ == root;
  const bool offers = small && sends && info.failure == nullptr;
  std::string failure = announce_and_agree(info, offers ? data : nullptr, offers ? bytes : 0);
  if (!failure.empty() || bytes == 0) return failure;
  if (small) {
    if (!sends) copy_bytes(data, area(root).slot[ops_ % kNodeSlots].payload_data(), bytes);
    return {};
  }
  ProcessArea& mine = area(rank_);
  const std::size_t chunks = (bytes + chunk_ - 1) / chunk_;
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::uint64_t step = steps_ + c + 1;
    const int buffer = static_cast<int>(step % buffers_);
    const std::size_t c0 = c * chunk_, m = std::min(bytes, c0 + chunk_) - c0;
    auto* at = static_cast<std::byte*>(data) + c0;
    // Every process ticks every word, so the steps stay in line with the
    // reductions' (see the picture in node_group.hpp).
    publish(mine.staged, step);
    if (sends) {
      if (step > buffers_) {
        wait_all(&ProcessArea::drained, step - buffers_, "drain an earlier chunk");
      }
      copy_bytes(result(buffer), at, m);
      publish(mine.folded, step);
    } else {
      publish(mine.folded, step);
      wait(area(root).folded, step, root, "send its chunk");
      copy_bytes(at, result(buffer), m);
    }
    publish(mine.drained, step);
  }
  steps_ += chunks;
  return {};
}

}  // namespace hreduce::detail
