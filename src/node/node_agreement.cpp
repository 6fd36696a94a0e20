// Announcing a node operation and agreeing on it. Every call of the node
// level starts here: each process says what it calls, and all leave with
// the same verdict, so that a process never waits in a step the others
// skipped.
//
//   announce   signature, arguments and any failure into the slot of this
//              operation (op number mod kNodeSlots); inputs of at most
//              inline_bytes() travel in the slot itself. Then wait for
//              every process's slot. Before writing slot k, a process makes
//              sure every other has announced k - kNodeSlots + 1, that is,
//              finished reading the slot's previous operation.
//   agree      any failure or signature that differs from process 0's
//              ends the operation on every process with the same failure.
//   run ahead  a process that only contributes to a small reduction (a
//              reduce's non-root, the first process of a scan or exscan)
//              announces its input and returns without waiting, as an MPI
//              eager send does: at most kNodeSlots - 2 operations past the
//              last one that some process waited in and compared (each
//              publishes that operation's number; a reduce's root compares
//              every time), else it looks at those numbers and runs on if
//              they leave it half the slots, else it waits once and
//              compares. Nobody can
//              tell it about a failure of such an operation in time, so the
//              processes that did wait mark the node broken (the team is
//              then unusable, as inside one process: docs/api.md) and it
//              learns so at its next operation. Every slot carries a digest
//              of its process's earlier signatures, so operations that
//              every process left without waiting are still compared, one
//              wait later.
//   after the  a process that needs only the processes before it (a scan's
//   earlier    or exscan's, all but the last) waits for those alone, and
//              leaves if they agree, on the same terms as one that runs
//              ahead. Whether it left is written in the slots themselves
//              (left_early), so every process that compares concludes
//              alike: if one of those before it failed, it waited for all,
//              and the failure is an ordinary one.
//
// The common case costs one pass over every slot's first line (all_agree);
// only a disagreement pays for words (compare_announcements).
#include <algorithm>
#include <cstring>
#include <string>

#include "src/common/copy.hpp"
#include "src/common/failure.hpp"
#include "src/common/hash.hpp"
#include "src/common/level_clock.hpp"
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"

namespace hreduce::detail {

// Payloads up to this many bytes make a call that costs about a line's
// trip between cores (recently_compared).
constexpr std::size_t kNodeLinePayload = 64;

// (__builtin_prefetch wants the read/write choice as a constant.)
template <int kWrite>
void NodeGroup::prefetch_slot(const Slot& slot, std::size_t payload_bytes) {
  __builtin_prefetch(&slot, kWrite);
  // A longer payload lies apart, and costs more than its first lines' trip.
  if (payload_bytes > sizeof slot.short_payload && payload_bytes <= sizeof slot.payload) {
    for (std::size_t line = 0; line < payload_bytes; line += 64) {
      __builtin_prefetch(slot.payload + line, kWrite);
    }
  }
}

Failure NodeGroup::agree(const NodeCallInfo& info) {
  LevelScope scope(CallLevel::node_segment);
  return announce_and_agree(info, {});
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

void NodeGroup::write_announcement(Slot& mine, const NodeCallInfo& info, const Announcement& a,
                                   Leaving leaving) {
  const int s = static_cast<int>(ops_ % kNodeSlots);
  announced_ = {info.signature, digest_, static_cast<bool>(info.failure)};
  mine.signature = announced_.signature;
  mine.digest = announced_.digest;
  digest_ = mix(digest_, info.signature);
  mine.ran_ahead = leaving;
  mine.failed = announced_.failed ? 1 : 0;
  if (info.failure) {
    mine.failure_kind = static_cast<std::int32_t>(info.failure.kind);
    copy_text(mine.failure, sizeof mine.failure, info.failure.text.c_str());
  }
  if (last_signature_[s] != info.signature) {
    last_signature_[s] = info.signature;
    mine.count = info.count;
    mine.root = info.root;
    mine.kind = static_cast<std::int32_t>(info.kind);
    copy_text(mine.type_name, sizeof mine.type_name, info.type_name);
    copy_text(mine.op_name, sizeof mine.op_name, info.op_name);
  }
  mine.payload_bytes = static_cast<std::uint32_t>(a.payload_bytes);
  mine.inclusive = a.inclusive;
  // Only the chunked and single-copy paths read them, and they take lines
  // of their own, written only where they change: a loop on the same
  // buffers then leaves those lines in the others' caches, where a store
  // would take each back first, and hold this announcement's `seq` behind
  // it, and the others would fetch it again.
  if (a.places != nullptr && !(mine.places == *a.places)) mine.places = *a.places;
  if (a.addresses != nullptr && !(mine.addresses == *a.addresses)) mine.addresses = *a.addresses;
  if (a.payload_bytes > 0)
    copy_bytes(payload_at(rank_, s, a.payload_bytes), a.payload, a.payload_bytes);
}

void NodeGroup::wait_for_announcements(std::uint64_t op, int s, int upto) {
  for (int q = 0; q < upto; ++q) {
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
    // too: its first line comes over while this one finishes, not when
    // the next one waits for it. Only that line: its payload's lines too
    // (up to 4 KiB), where the writer was often still writing them, took
    // each away from it once more; back-to-back scans, exscans and
    // reduces of 1 and 4 KiB on two processes took 0.19-0.32 and 0.54-0.80
    // us with them, 0.14-0.19 and 0.41-0.47 without (AMD guest, in turns).
    if (theirs.ran_ahead != 0) prefetch_slot<kForReading>(area(q).slot[(op + 1) % kNodeSlots], 0);
  }
}

namespace {

// Calls where every process waits for the inputs of every other: nobody
// runs ahead.
bool every_process_reads_every_input(CollectiveKind kind) {
  return kind == CollectiveKind::allreduce || kind == CollectiveKind::reduce_scatter ||
         kind == CollectiveKind::reduce_scatter_block;
}

}  // namespace

Failure NodeGroup::announce_and_agree(const NodeCallInfo& info, const Announcement& a) {
  kind_ = info.kind;
  deadline_ = Deadline::after(timeout_);
  check_broken();
  const std::uint64_t op = ++ops_;
  if (op >= kNodeSlots && everyone_announced_ < op - kNodeSlots + 1) wait_for_slot(op);
  const int s = static_cast<int>(op % kNodeSlots);
  // One look at how far the others compared serves both ways of leaving.
  const bool may_leave = (a.contributes_only || (a.needs_only_earlier && rank_ + 1 < size_)) &&
                         run_ahead_ && recently_compared(op, a.payload_bytes);
  const bool runs_ahead = may_leave && a.contributes_only;
  const bool after_earlier = may_leave && !runs_ahead;
  Slot& mine = area(rank_).slot[s];
  write_announcement(mine, info, a,
                     runs_ahead      ? kRunsAhead
                     : after_earlier ? kAfterEarlier
                                     : kWaitsForAll);
  publish(mine.seq, op);
  // The next announcement's lines, taken back from the cores that read them
  // while nobody waits for them yet: that write then finds them here.
  // (The cut-off stays out here: moved into prefetch_slot as a flag, it
  // made a 16 KiB allreduce measurably slower, for reasons not found.)
  // Not where every process waits for every other and the payload rides
  // in the first line: there it made an 8-byte allreduce on 2 processes
  // 0.32-0.35 us, against 0.30-0.31 without, and its calls split into fast
  // and slow ones (a VM's 2 cores; measured, not explained). Where one
  // process runs ahead, and for longer payloads, it pays.
  const bool long_payload = a.payload_bytes > kNodePrefetchedPayload;
  if (!(every_process_reads_every_input(info.kind) &&
        a.payload_bytes <= sizeof mine.short_payload)) {
    prefetch_slot<kForWriting>(area(rank_).slot[(op + 1) % kNodeSlots],
                               runs_ahead && long_payload ? 0 : a.payload_bytes);
  }
  if (runs_ahead) return {};
  if (after_earlier) {
    wait_for_announcements(op, s, rank_);
    if (agree_before(s, rank_ + 1)) return {};
    // Not to be left early: every process sees why (left_early) and goes
    // on as though this one had waited for all.
  }
  wait_for_announcements(op, s, size_);
  // Every announcement was there without waiting, yet the others may have
  // given up on this operation already (this process came after their
  // timeout), or be deciding to right now: it fails here too.
  settle_give_ups();
  check_broken();
  everyone_announced_ = compared_ = op;
  Failure failure;
  if (!all_agree(s)) [[unlikely]]
    failure = compare_announcements(info);
  area(rank_).compared.store(op, std::memory_order_relaxed);
  return failure;
}

// `s` is the current operation's slot (every caller's), and this process's
// own words come from what it wrote there (announced_), not from the slot:
// the others take that line right after its publication, and reading it
// back held the process for about a line's trip: perf put a sixth of the
// time in the library's own code (outside its waits and the kernel's
// copies) there, and a loop of 64 KiB exscans on 2 processes went from
// 3.05-3.20 to 2.92-3.03 µs a call.
bool NodeGroup::agree_before(int s, int upto) const {
  const auto words = [&](int q) {
    if (q == rank_) return announced_;
    const Slot& theirs = area(q).slot[s];
    return FirstLine{theirs.signature, theirs.digest, theirs.failed != 0};
  };
  const FirstLine first = words(0);
  bool agreed = true;
  for (int q = 0; q < upto; ++q) {
    const FirstLine theirs = words(q);
    agreed &=
        !theirs.failed & (theirs.signature == first.signature) & (theirs.digest == first.digest);
  }
  return agreed;
}

bool NodeGroup::recently_compared(std::uint64_t op, std::size_t payload_bytes) {
  if (op - compared_ < kNodeSlots - 1) return true;
  // A process that receives (a reduce's root, the last of a scan) compares
  // on every operation: one look at its word usually lets this one go on.
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    compared_ = std::max(compared_, area(q).compared.load(std::memory_order_relaxed));
  }
  // A call that costs little more than moving a line between cores: with
  // little room gained, wait and compare this once instead. Looking again
  // at every call, one more call's room each time, took the line from the
  // receiver on each of its calls, whose next store then waited for it
  // (15 % of a 4 B call). A longer call would rather pay that than wait
  // for the receiver to work through every call queued (60 % of a 4 KiB
  // call).
  const std::uint64_t room = payload_bytes <= kNodeLinePayload ? kNodeSlots / 2 : kNodeSlots - 1;
  return op - compared_ < room;
}

bool NodeGroup::left_early(int q) const {
  const std::uint32_t leaving = slot(q).ran_ahead;
  return leaving == kRunsAhead ||
         (leaving == kAfterEarlier && agree_before(static_cast<int>(ops_ % kNodeSlots), q + 1));
}

Failure NodeGroup::compare_announcements(const NodeCallInfo& info) {
  // Called when all_agree() did not: say how they differ.
  Failure failure;
  for (int q = 0; q < size_ && !failure; ++q) {
    const Slot& theirs = slot(q);
    if (theirs.failed) {
      failure = Failure::of(static_cast<ErrorKind>(theirs.failure_kind),
                            std::string(to_string(info.kind)) + ": process " +
                                std::to_string(first_process_ + q) + " failed: " + theirs.failure);
    }
  }
  bool earlier = false;
  for (int q = 1; q < size_; ++q) {
    if (!failure && slot(q).signature != slot(0).signature) failure = disagreement(info);
    earlier = earlier || slot(q).digest != slot(0).digest;
  }
  bool anyone_ran_ahead = false;
  for (int q = 0; q < size_; ++q) anyone_ran_ahead = anyone_ran_ahead || left_early(q);
  if (!earlier && (!failure || !anyone_ran_ahead)) {
    // Every process is here and knows: all start their digests afresh alike.
    if (failure) digest_ = mix(0, ops_);
    return failure;
  }
  break_after_run_ahead(info, std::move(failure), earlier);
}

// A failure that some process left without waiting for (it ran ahead), or
// a disagreement in an operation that every process left so: nobody can
// give those processes a verdict any more, so the node breaks.
void NodeGroup::break_after_run_ahead(const NodeCallInfo& info, Failure failure, bool earlier) {
  std::string ran_ahead;
  for (int q = 0; q < size_; ++q) {
    if (left_early(q)) {
      ran_ahead += (ran_ahead.empty() ? "" : ", ") + std::to_string(first_process_ + q);
    }
  }
  std::string text = failure ? std::move(failure.text) : std::string(to_string(info.kind));
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

// The words of a disagreement name what each side called; the kind says
// which difference it is, for the MPI drop-in's error class (counts first,
// then a reduce's root), without anyone reading the words.
Failure NodeGroup::disagreement(const NodeCallInfo& info) const {
  auto said = [&](int q) {
    const Slot& theirs = slot(q);
    std::string text = "process " + std::to_string(first_process_ + q) + " called " +
                       to_string(static_cast<CollectiveKind>(theirs.kind)) + " with count " +
                       std::to_string(theirs.count);
    if (static_cast<CollectiveKind>(theirs.kind) == CollectiveKind::reduce) {
      text += ", root " + std::to_string(theirs.root);
    }
    return text + ", element type " + theirs.type_name + ", op " + theirs.op_name;
  };
  std::string text = std::string(to_string(info.kind)) + ": processes disagree on the call: ";
  ErrorKind kind = ErrorKind::mismatch;
  for (int q = 1; q < size_; ++q) {
    const Slot &first = slot(0), &theirs = slot(q);
    if (theirs.signature == first.signature) continue;
    const std::string their_call = said(q), reference = said(0);
    text += reference + "; " + their_call;
    if (their_call.substr(their_call.find(" called")) ==
        reference.substr(reference.find(" called"))) {
      text += " (they differ in the reduce_scatter counts or the options)";
    }
    const bool reduces = first.kind == static_cast<std::int32_t>(CollectiveKind::reduce) &&
                         theirs.kind == first.kind;
    if (theirs.count != first.count) {
      kind = ErrorKind::count_mismatch;
    } else if (reduces && theirs.root != first.root) {
      kind = ErrorKind::root_mismatch;
    }
    break;
  }
  return Failure::of(kind, std::move(text));
}

}  // namespace hreduce::detail
