// The ring of nonblocking calls (pending_calls.hpp has the picture).
#include "src/engine/nonblocking/pending_calls.hpp"

#include <algorithm>
#include <chrono>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/engine/call_checks.hpp"
#include "src/engine/collectives.hpp"

namespace hreduce::detail {

namespace {

// `done` is published without a wake-up (finish_part), so its waiters never
// block in the kernel: they spin, yield, then poll between naps of growing
// length (20 µs to about 1 ms), until `deadline` if it is active.
bool poll_at_least(const std::atomic<std::uint64_t>& word, std::uint64_t target,
                   const Deadline& deadline, const Waiting& waiting) {
  auto there = [&] { return word.load(std::memory_order_acquire) >= target; };
  for (int i = 0; i < waiting.spins; ++i) {
    if (there()) return true;
    cpu_relax();
  }
  for (int i = 0; i < 64; ++i) {
    if (there()) return true;
    std::this_thread::yield();
  }
  auto nap = std::chrono::microseconds(20);
  while (!there()) {
    if (deadline.active && std::chrono::steady_clock::now() >= deadline.at()) return there();
    std::this_thread::sleep_for(nap);
    if (nap < std::chrono::milliseconds(1)) nap *= 2;
  }
  return true;
}

std::string call_name(std::uint64_t seq) { return "nonblocking call " + std::to_string(seq); }

// What member `r`'s call says differently from member 0's, and its kind.
Failure difference(const Call& mine, const Call& first, int r) {
  const std::string who = "member " + std::to_string(r) + " ";
  if (mine.kind != first.kind) {
    return Failure::of(ErrorKind::mismatch, who + "calls " + to_string(mine.kind) +
                                                " where member 0 calls " + to_string(first.kind));
  }
  if (mine.count != first.count) {
    return Failure::of(ErrorKind::count_mismatch,
                       who + "passes count " + std::to_string(mine.count) +
                           " where member 0 passes " + std::to_string(first.count));
  }
  if (mine.kind == CollectiveKind::reduce && mine.root != first.root) {
    return Failure::of(ErrorKind::root_mismatch, who + "passes root " + std::to_string(mine.root) +
                                                     " where member 0 passes " +
                                                     std::to_string(first.root));
  }
  if (mine.op.type != first.op.type) {
    return Failure::of(ErrorKind::mismatch, who + "passes elements of " + demangle(mine.op.type) +
                                                " where member 0 passes " +
                                                demangle(first.op.type));
  }
  if (mine.op.op_type != first.op.op_type) {
    return Failure::of(ErrorKind::mismatch, who + "passes op " + mine.op.op_name +
                                                " where member 0 passes " + first.op.op_name);
  }
  if (uses_counts(mine.kind)) {
    return Failure::of(ErrorKind::count_mismatch, who + "passes other counts than member 0");
  }
  return Failure::of(ErrorKind::mismatch, who + "passes other options than member 0");
}

}  // namespace

static_assert(std::is_trivially_destructible_v<PublishedCall>, "parts_ is released as bytes");

PendingCalls::PendingCalls(TeamState& team, int members)
    : team_(team), members_(members), slots_(std::make_unique<PendingSlot[]>(kPendingSlots)),
      issued_(std::make_unique<Issued[]>(members)) {
  const std::size_t stride = (members * sizeof(PublishedCall) + kPage - 1) / kPage * kPage;
  parts_ = NumaBuffer(team.topology, stride * kPendingSlots, -1);
  auto* const parts = static_cast<std::byte*>(parts_.data());
  for (int s = 0; s < kPendingSlots; ++s) {
    slots_[s].members = new (parts + s * stride) PublishedCall[members];
  }
  std::vector<NumaRange> pages;
  for (int r = 0; r < members; ++r) {
    pages.push_back({r * kPage, (r + 1) * kPage, team.members[static_cast<std::size_t>(r)]->numa});
  }
  dones_ = NumaBuffer(team.topology, members * kPage, std::move(pages));
  done_words_ = static_cast<std::atomic<std::uint64_t>*>(dones_.data());
  for (std::size_t w = 0; w < members * kDoneWordsPerMember; ++w) {
    new (done_words_ + w) std::atomic<std::uint64_t>(0);
  }
}

PendingCalls::~PendingCalls() = default;

std::uint64_t PendingCalls::publish(int rank, const Call& call, std::uint64_t signature,
                                    const std::string& problem) {
  const std::uint64_t seq = ++issued_[rank].seq;
  PendingSlot& slot = slot_of(seq);
  // Every member must be done with the call that used this slot last
  // before its part is overwritten. Each member finishes its own call
  // seq - kPendingSlots + 1 before publishing call seq, so a member that
  // published the previous call is done with this slot's: its number,
  // read in that call already, is usually still in this core's cache.
  // Both usually hold without waiting, so they are looked at here first:
  // calling the waits on every call made an 8-byte persistent call on a
  // team of one 54 ns, against 47.
  if (const std::uint64_t oldest = seq - kPendingSlots + 1;
      seq >= kPendingSlots && done_of(rank, oldest).load(std::memory_order_relaxed) < oldest) {
    drive(oldest, rank, call.kind, false);
  }
  if (seq > kPendingSlots && !everyone_published(slot_of(seq - 1), seq - 1)) {
    wait_for_others(seq - kPendingSlots, rank, call.kind);
  }
  PublishedCall& mine = slot.members[rank];
  mine.call = &call;
  mine.signature = signature;
  mine.invalid = !problem.empty();
  mine.in_place = call.in == call.out;
  mine.small = !mine.invalid && goes_small(call, members_);
  if (mine.small) {
    copy_bytes(mine.payload, call.in, input_elements(call, members_) * call.op.elem_size);
  }
  if (mine.invalid) record_problem(seq, rank, problem);
  // Where the team publishes without a fence (Waiting::light), the member
  // that comes last goes on to read the others' lines while its own is
  // still being taken back from their caches; with the fence it waited for
  // that first (asymmetric_fence.hpp has the figures). Without it, two
  // members publishing at once may both miss the other in their first
  // look, and then see each other in drive()'s polls.
  announce(mine.seq, seq);
  wake_blocked(mine.seq, team_.waiting);
  // The others read this member's first line of each slot, so the next
  // call's writes there must first take the line back from their caches;
  // asked for now, that overlaps this call instead of delaying the next
  // one's publication (as prefetch_own_next_slot does for blocking calls).
  __builtin_prefetch(&slot_of(seq + 1).members[rank], 1);
  return seq;
}

std::uint64_t PendingCalls::signature(int rank, const Call& call) {
  Issued& mine = issued_[rank];
  if (!mine.described || uses_counts(call.kind) || !describes(mine.last, call)) {
    mine.last = describe(call);
    mine.last_signature = signature_of(mine.last, members_);
    mine.described = true;
  }
  return mine.last_signature;
}

void PendingCalls::wait_for_others(std::uint64_t seq, int rank, CollectiveKind kind) {
  const PendingSlot& previous = slot_of(seq + kPendingSlots - 1);
  const Deadline deadline = Deadline::after(team_.timeout);
  for (int q = 0; q < members_; ++q) {
    if (q == rank) continue;
    const std::uint64_t published = previous.members[q].seq.load(std::memory_order_acquire);
    if (published >= seq + kPendingSlots - 1) continue;
    if (!poll_at_least(done_of(q, seq), seq, deadline, team_.waiting)) {
      time_out(seq, nonblocking_label(kind, false),
               "member " + std::to_string(q) + " to be done with it (its slot is needed)");
    }
  }
}

// Whoever sees first that every member published a large call on which
// all agree: the plan, and the claims opened.
void PendingCalls::open(PendingSlot& slot, std::uint64_t seq) {
  std::uint64_t before = slot.opener.load(std::memory_order_relaxed);
  do {
    if (before >= seq) return;  // another member opens it
  } while (!slot.opener.compare_exchange_weak(before, seq, std::memory_order_acq_rel));
  plan(slot);
  const std::uint64_t chunks = (slot.plan.total + slot.plan.chunk - 1) / slot.plan.chunk;
  slot.chunks.store(chunks, std::memory_order_relaxed);
  slot.finished.store(seq << kChunkBits, std::memory_order_relaxed);
  // Opened even without chunks: members waiting for the opening wake here.
  announce(slot.claims, (seq << kChunkBits) | chunks);
  wake_blocked(slot.claims, team_.waiting);
  if (chunks == 0) {  // n = 0 only synchronises
    complete(slot, seq);
    return;
  }
}

bool PendingCalls::everyone_published(const PendingSlot& slot, std::uint64_t seq) const {
  for (int q = 0; q < members_; ++q) {
    if (slot.members[q].seq.load(std::memory_order_acquire) < seq) return false;
  }
  return true;
}

// Every member that finds the call failing records why, once: they all
// see the same calls, and so word the same failure.
bool PendingCalls::agree(PendingSlot& slot, std::uint64_t seq) {
  const PublishedCall* calls = slot.members;
  bool fine = true;
  for (int r = 0; r < members_; ++r) fine &= !calls[r].invalid;
  if (!fine) return false;  // the members recorded why
  for (int r = 1; r < members_; ++r) fine &= calls[r].signature == calls[0].signature;
  if (fine) return true;
  record_disagreement(slot, seq);
  return false;
}

void PendingCalls::record_problem(std::uint64_t seq, int rank, const std::string& problem) {
  record(seq, ErrorKind::argument, "member " + std::to_string(rank) + ": " + problem);
}

void PendingCalls::record_disagreement(const PendingSlot& slot, std::uint64_t seq) {
  const PublishedCall* calls = slot.members;
  std::lock_guard lock(failures_mutex_);
  if (failures_.count(seq) != 0) return;
  for (int r = 1; r < members_; ++r) {
    if (calls[r].signature == calls[0].signature) continue;
    const Failure why = difference(*calls[r].call, *calls[0].call, r);
    record_locked(seq, why.kind, why.text);
  }
}

void PendingCalls::plan(PendingSlot& slot) {
  const Call& first = *slot.members[0].call;
  CallPlan& plan = slot.plan;
  plan.kind = first.kind;
  plan.elem_size = first.op.elem_size;
  plan.total = input_elements(first, members_);
  // Every member's chunk of work is at least the chunk the blocking sliced
  // path folds at a time; enlarged only where the chunk count would not fit.
  plan.chunk = chunk_elements(first.options->chunk_bytes, plan.elem_size);
  plan.chunk = std::max(plan.chunk, plan.total / kChunkMask + 1);
  plan.staged = false;
  if (uses_counts(first.kind) || first.kind == CollectiveKind::reduce_scatter_block) {
    for (int r = 0; r < members_; ++r) plan.staged |= slot.members[r].in_place;
    if (plan.staged) plan.staging.resize(plan.total * plan.elem_size);
  }
}

// `claims` counts the chunks left down, so that the word alone says
// whether one is left: a count kept apart could already be the next call's.
bool PendingCalls::claim(PendingSlot& slot, std::uint64_t seq, std::uint64_t& chunk) {
  std::uint64_t word = slot.claims.load(std::memory_order_acquire);
  for (;;) {
    if ((word >> kChunkBits) != seq || (word & kChunkMask) == 0) return false;
    if (slot.claims.compare_exchange_weak(word, word - 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      // The call cannot end before this chunk does: `chunks` is still its own.
      chunk = slot.chunks.load(std::memory_order_relaxed) - (word & kChunkMask);
      return true;
    }
  }
}

void PendingCalls::work(PendingSlot& slot, std::uint64_t seq, std::uint64_t chunk,
                        const char* worker) {
  try {
    fold_chunk(slot, members_, chunk);
  } catch (...) {
    // The chunk still counts as finished: every member then throws OpError.
    record(seq, ErrorKind::op,
           std::string("the op threw (") + worker + "): " + current_exception_text());
  }
  const std::uint64_t before = slot.finished.fetch_add(1, std::memory_order_acq_rel);
  if ((before & kChunkMask) + 1 == slot.chunks.load(std::memory_order_relaxed)) {
    complete(slot, seq);
  }
}

void PendingCalls::complete(PendingSlot& slot, std::uint64_t seq) {
  if (slot.plan.staged && slot.chunks.load(std::memory_order_relaxed) > 0) {
    unstage_blocks(slot, members_);
  }
  announce(slot.completed, seq);
  wake_blocked(slot.completed, team_.waiting);
}

bool PendingCalls::test(std::uint64_t seq, int rank) {
  PendingSlot& slot = slot_of(seq);
  PublishedCall& mine = slot.members[rank];
  if (done_of(rank, seq).load(std::memory_order_relaxed) >= seq) return true;
  if (slot.claims.load(std::memory_order_acquire) >> kChunkBits < seq) {
    // Not open: a small call (never opened), a failing one, or one whose
    // members have not all published.
    if (!everyone_published(slot, seq)) return false;
    if (!agree(slot, seq)) return finish_part(rank, seq);
    if (mine.small) {
      fold_small(slot, members_, rank);
      return finish_part(rank, seq);
    }
    open(slot, seq);
  }
  std::uint64_t chunk = 0;
  while (claim(slot, seq, chunk)) work(slot, seq, chunk, "a member");
  if (slot.completed.load(std::memory_order_acquire) < seq) return false;
  return finish_part(rank, seq);
}

// No wake-up: whoever waits for `done` (wait_for_others) polls, so the
// common path saves the fence a wake-up needs.
bool PendingCalls::finish_part(int rank, std::uint64_t seq) {
  announce(done_of(rank, seq), seq);
  return true;
}

void PendingCalls::drive(std::uint64_t seq, int rank, CollectiveKind kind, bool persistent) {
  PendingSlot& slot = slot_of(seq);
  const Deadline deadline = Deadline::after(team_.timeout);
  while (!test(seq, rank)) {
    bool arrived = true;
    // Wait for whoever has not published; then, if the call is being
    // opened, for its claims; else every chunk is claimed: for its end.
    for (int q = 0; q < members_ && arrived; ++q) {
      arrived = wait_at_least(slot.members[q].seq, seq, deadline, team_.waiting);
    }
    if (arrived && !test(seq, rank)) {
      const bool opened = slot.claims.load(std::memory_order_acquire) >> kChunkBits >= seq;
      arrived = opened ? wait_at_least(slot.completed, seq, deadline, team_.waiting)
                       : wait_at_least(slot.claims, seq << kChunkBits, deadline, team_.waiting);
    }
    if (!arrived) time_out_waiting(seq, kind, persistent);
  }
}

void PendingCalls::time_out_waiting(std::uint64_t seq, CollectiveKind kind, bool persistent) {
  time_out(seq, nonblocking_label(kind, persistent), what_is_missing(seq));
}

std::string PendingCalls::what_is_missing(std::uint64_t seq) {
  PendingSlot& slot = slot_of(seq);
  std::string missing;
  for (int q = 0; q < members_; ++q) {
    if (slot.members[q].seq.load(std::memory_order_acquire) < seq) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(q);
    }
  }
  return missing.empty() ? "its chunks to be folded" : "members " + missing + " to start it";
}

void PendingCalls::time_out(std::uint64_t seq, const std::string& label,
                            const std::string& waited_for) {
  const std::string text = label + " (" + call_name(seq) + "): timed out after " +
                           std::to_string(team_.timeout.count()) + " ms waiting for " + waited_for;
  team_.break_team(Failure::of(ErrorKind::unusable, text));
  throw UnusableTeamError(with_way_back(text + "; " + std::string(kNoLongerUsable)));
}

void PendingCalls::record(std::uint64_t seq, ErrorKind kind, const std::string& text) {
  std::lock_guard lock(failures_mutex_);
  record_locked(seq, kind, text);
}

void PendingCalls::record_locked(std::uint64_t seq, ErrorKind kind, const std::string& text) {
  auto [at, fresh] = failures_.try_emplace(seq);
  Recorded& r = at->second;
  if (fresh) {
    r.failure = Failure::of(kind, text);
    r.unread = members_;
    failures_unread_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The first kind that says more than `argument` wins, as in the blocking calls.
  if (r.failure.kind == ErrorKind::argument) r.failure.kind = kind;
  r.failure.text += "; " + text;
}

Failure PendingCalls::take_failure(std::uint64_t seq) {
  if (!failures_pending()) return Failure::none();
  std::lock_guard lock(failures_mutex_);
  auto at = failures_.find(seq);
  if (at == failures_.end()) return Failure::none();
  Failure failure = at->second.failure;
  if (--at->second.unread == 0) {
    failures_.erase(at);
    failures_unread_.fetch_sub(1, std::memory_order_relaxed);
  }
  return failure;
}

void PendingCalls::restart() {
  for (int s = 0; s < kPendingSlots; ++s) {
    PendingSlot& slot = slots_[s];
    slot.claims.store(0, std::memory_order_relaxed);
    slot.finished.store(0, std::memory_order_relaxed);
    slot.completed.store(0, std::memory_order_relaxed);
    slot.opener.store(0, std::memory_order_relaxed);
    slot.chunks.store(0, std::memory_order_relaxed);
    for (int r = 0; r < members_; ++r) {
      slot.members[r].seq.store(0, std::memory_order_relaxed);
      done_of(r, s).store(0, std::memory_order_relaxed);
    }
  }
  for (int r = 0; r < members_; ++r) issued_[r].seq = 0;
  std::lock_guard lock(failures_mutex_);
  failures_.clear();
  failures_unread_.store(0, std::memory_order_relaxed);
}

std::string nonblocking_label(CollectiveKind kind, bool persistent) {
  return persistent ? std::string(to_string(kind)) + "_init" : "i" + std::string(to_string(kind));
}

PendingCalls& pending_calls_of(TeamState& team) {
  std::call_once(team.pending_calls_once,
                 [&] { team.pending_calls = std::make_unique<PendingCalls>(team, team.size()); });
  return *team.pending_calls;
}

}  // namespace hreduce::detail
