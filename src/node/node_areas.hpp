// The layout of the node's segment as NodeGroup's parts see it (the picture
// in node_group.hpp): private to src/node.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "src/node/node_group.hpp"
#include "src/node/shared_wait.hpp"
#include "src/node/way_by_measure.hpp"

namespace hreduce::detail {

// The value a process leaves in each of its progress words when it breaks
// the node (NodeGroup::abandon), so that nobody waits for it any more.
inline constexpr std::uint64_t kEndOfWords = ~std::uint64_t{0};

// The word describe() leaves for the others to read and write back.
inline constexpr std::uint64_t kReachProbe = 0x68726564756365ull;

// A C string into a fixed field of the segment, cut to fit.
inline void copy_text(char* to, std::size_t capacity, const char* from) {
  std::strncpy(to, from ? from : "", capacity - 1);
  to[capacity - 1] = '\0';
}

// `elements` rounded up to whole cache lines where the element size allows
// (divides 64): where the node level cuts a vector between processes, so
// that no two write one line.
inline std::size_t whole_lines(std::size_t elements, std::size_t es) {
  if (es > 64 || 64 % es != 0) return elements;
  const std::size_t per_line = 64 / es;
  return (elements + per_line - 1) / per_line * per_line;
}

// Where a process's buffers lie in Team::allocate's memory, for the chunk
// ring's folders to read and write them in place (node_allocations.hpp).
struct NodeGroup::SharedPlaces {
  NodePlace in, out, prefix;
  std::uint64_t out_lo = 0, out_hi = 0;
  // Scan: this process receives part of the node's total (without any,
  // the last process's input is read by nobody unless it is inclusive).
  std::uint32_t wants_total = 0;
  friend bool operator==(const SharedPlaces&, const SharedPlaces&) = default;
};

// Where a process's buffers lie in its own address space (0: none), for
// the other process of the single copy to reach them (peer_memory.hpp),
// and whether it receives all of the total (1) or a part (2).
struct NodeGroup::PeerAddresses {
  std::uint64_t input = 0, output = 0, prefix = 0;
  std::uint64_t out_lo = 0, out_hi = 0;
  std::uint32_t total = 0;
  friend bool operator==(const PeerAddresses&, const PeerAddresses&) = default;
};

// One announcement. What every other process reads on every operation
// (seq, signature, failed) shares the first line with short inputs.
struct NodeGroup::Slot {
  std::atomic<std::uint64_t> seq{0};  // = operation number once the rest is written
  std::uint64_t signature = 0;
  std::uint64_t digest = 0;  // of the process's signatures before this operation
  std::uint32_t failed = 0;
  std::uint32_t payload_bytes = 0;
  // Scan: this process wants x_0 ∘ … ∘ x_q, not … ∘ x_{q-1}. Processes of
  // one team may differ (one alone in its process takes the node's
  // inclusive prefix as its result), and another process folds its slice.
  std::uint32_t inclusive = 0;
  std::uint32_t ran_ahead = 0;  // the process returned without waiting
  alignas(16) std::byte short_payload[16];
  // Where this process's buffers lie, for the two ways that reach them
  // without the staging chunks (only the chunked and single-copy paths
  // write them, which can afford more lines).
  NodeGroup::SharedPlaces places;
  NodeGroup::PeerAddresses addresses;
  // For messages only, rewritten when the signature changes.
  std::uint64_t count = 0;
  std::int64_t root = 0;
  std::int32_t kind = 0;
  std::int32_t failure_kind = 0;  // an ErrorKind, where `failed`
  char type_name[64] = {};
  char op_name[64] = {};
  char failure[512] = {};
  // Up to kNodeInline bytes; a longer one lies apart (payload_at).
  alignas(64) std::byte payload[kNodeInline];
};

// One process's WayFigures (way_by_measure.hpp) of one kind's size class,
// by way (0 inline, 1 the single copy), on lines of their own.
struct alignas(128) MeasuredClass {
  std::atomic<std::uint64_t> ticks[2]{}, last[2]{};
  std::atomic<std::uint32_t> calls[2]{}, run[2]{};
};

struct alignas(128) NodeGroup::ProcessArea {
  Slot slot[kNodeSlots];
  alignas(128) std::atomic<std::uint64_t> staged{0};
  alignas(128) std::atomic<std::uint64_t> folded{0};
  alignas(128) std::atomic<std::uint64_t> drained{0};
  // The last operation this process compared: every process's signatures
  // up to it agreed (or all learnt they did not). A process running ahead
  // needs only that *someone* compared lately, not that it waited itself.
  alignas(128) std::atomic<std::uint64_t> compared{0};
  // The single-copy path: the last operation whose reading this process
  // finished (the others' inputs may change from then on).
  alignas(128) std::atomic<std::uint64_t> released{0};
  // Nanoseconds this process took for its part of operation `released`,
  // where the cut is balanced (cut_balance.hpp): written just before it, on
  // its line, so that it costs neither side another line's trip.
  std::uint64_t copy_nanoseconds = 0;
  // The op threw in this process's fold (the chunk ring), or its single
  // copy failed, during operation `fold_failed`.
  alignas(128) std::uint64_t fold_failed = 0;
  char fold_failure[512] = {};
  std::atomic<std::int32_t> pid{0};
  // describe(): a word of this process for the others to try reading and
  // writing, and whether this process could reach every other's (1) or
  // not (2).
  std::uint64_t probe_address = 0;
  std::uint32_t probe_ok = 0;
  // HREDUCE_NODE_SINGLE_COPY asks for the race (1) or not (2), and this
  // process's best times in it.
  std::uint32_t wants_race = 0;
  RaceTimes race[8];  // by kind_bit's bit
  // The verdict this process kept from an earlier race of the same pair of
  // processes: 0x100 | chunks_won, or 0 for none.
  std::uint32_t race_known = 0;
  // Whether this process registered for the asymmetric fence (1) or not (2).
  std::uint32_t light_publish_ok = 0;
  // This process's figures of the measured ways, by kind and size class;
  // written on every such call, read by node rank 0 when it steers.
  MeasuredClass measured[kMeasuredKinds][kMeasuredSizes];
  // Where the process runs and its members sit, and where it asked for its
  // staging chunks, for explain().
  char description[256] = {};
  char staging_request[64] = {};
};

struct NodeGroup::Header {
  SharedSleepers sleepers;
  // 0; 1 while the first process to find the node broken writes why; 2.
  alignas(128) std::atomic<std::uint32_t> broken{0};
  // Processes deciding whether to give up on a wait whose deadline passed
  // (NodeGroup::arrived_after_all); on `broken`'s line, which every check
  // reads anyway.
  std::atomic<std::uint32_t> giving_up{0};
  char broken_text[1024] = {};
  // Per measured kind, the size classes that take the single copy, from
  // which operation on (way_by_measure.hpp's WayVerdict); node rank 0
  // writes them.
  alignas(128) std::atomic<std::uint64_t> way_verdicts[kMeasuredKinds]{};
};

struct NodeGroup::Layout {
  static constexpr std::size_t kHeader = sizeof(Header);
  static std::size_t areas() { return kHeader; }
  static std::size_t stages(int P) {
    const std::size_t end = kHeader + P * sizeof(ProcessArea);
    return (end + 4095) / 4096 * 4096;
  }
  // After the stages and the results: per process, a place per slot for
  // inputs longer than kNodeInline, where a call may carry them (one
  // receiver on two processes); none elsewhere.
  static std::size_t long_payload_bytes(int P) {
    const std::size_t longest = node_inline_bytes(P, CollectiveKind::reduce);
    return longest > kNodeInline ? longest : 0;
  }
  static std::size_t long_payloads(int P, int buffers, std::size_t chunk) {
    return stages(P) +
           (static_cast<std::size_t>(P) + 1) * static_cast<std::size_t>(buffers) * chunk;
  }
  static std::size_t end(int P, int buffers, std::size_t chunk) {
    return long_payloads(P, buffers, chunk) +
           static_cast<std::size_t>(P) * kNodeSlots * long_payload_bytes(P);
  }
};

// The segment's places, inline in every part: the parts poll and publish
// through them on every operation, and a call per access across files cost
// a small call between two processes a quarter of its time (their loops
// were inlined while the node level was one file).
inline NodeGroup::Header& NodeGroup::header() const {
  return *static_cast<Header*>(segment_.data());
}

inline NodeGroup::ProcessArea& NodeGroup::area(int rank) const {
  auto* base = static_cast<std::byte*>(segment_.data()) + Layout::areas();
  return reinterpret_cast<ProcessArea*>(base)[rank];
}

inline NodeGroup::Slot& NodeGroup::slot(int rank) const {
  return area(rank).slot[ops_ % kNodeSlots];
}

inline std::byte* NodeGroup::stage(int rank, int buffer) const {
  return static_cast<std::byte*>(segment_.data()) + Layout::stages(size_) +
         (static_cast<std::size_t>(rank) * buffers_ + static_cast<std::size_t>(buffer)) * chunk_;
}

inline std::byte* NodeGroup::result(int buffer) const { return stage(size_, 0) + buffer * chunk_; }

inline std::byte* NodeGroup::payload_at(int rank, int s, std::size_t bytes) const {
  Slot& slot = area(rank).slot[s];
  if (bytes <= sizeof slot.short_payload) return slot.short_payload;
  if (bytes <= sizeof slot.payload) return slot.payload;
  const std::size_t place =
      static_cast<std::size_t>(rank) * kNodeSlots + static_cast<std::size_t>(s);
  return static_cast<std::byte*>(segment_.data()) +
         Layout::long_payloads(size_, static_cast<int>(buffers_), chunk_) +
         place * Layout::long_payload_bytes(size_);
}

inline const std::byte* NodeGroup::payload_of(int rank) const {
  return payload_at(rank, static_cast<int>(ops_ % kNodeSlots), slot(rank).payload_bytes);
}

inline void NodeGroup::publish(std::atomic<std::uint64_t>& word, std::uint64_t value) const {
  shared_publish(word, value, header().sleepers, light_publish_);
}

}  // namespace hreduce::detail
