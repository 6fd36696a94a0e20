// The node level's sizes and thresholds (node_group.hpp has the picture;
// docs/performance.md, "Where the node level's thresholds come from", why
// each sits where it does).
#pragma once

#include <cstddef>

namespace hreduce::detail {

// Inputs of at most NodeGroup::inline_bytes() travel inside the
// announcement: kNodeInlineBudget over the number of other processes,
// rounded down to lines, within [kNodeInlineFloor, kNodeInline], since a
// process that wants the total reads every other process's input.
inline constexpr std::size_t kNodeInline = 16 * 1024;
inline constexpr std::size_t kNodeInlineFloor = 512;
inline constexpr std::size_t kNodeInlineBudget = 16 * 1024;
// A reduce, scan or exscan on two processes (one_receiver()) goes inline up
// to this many bytes: the receiver folds or copies the other's input
// straight from the announcement, and the other runs ahead, so that one
// copies while the other folds. Inputs longer than kNodeInline lie in a
// place of their own per slot (NodeGroup::payload_at), which only a
// segment of two processes has. Above 8 KiB the inline way and the single
// copy go by measure (way_by_measure.hpp). Back to back, a 128 KiB reduce
// took 6.2-7.4 us inline in the host's quick seconds, 11.6-13.9 by the
// single copy, an exscan of 64 KiB 1.7-3.2 against 4.2-6.2; at 256 KiB the
// inline way was no steady gain there, and a lone call, which overlaps
// nothing, took 26-34 us against the single copy's 22-26
// (docs/performance.md).
inline constexpr std::size_t kNodeInlineOneReceiver = 128 * 1024;
// Announcement slots per process: how far a process may run ahead. A
// process that used up its room waits until the receiver has worked
// through every queued call, so a deep queue drains less often: with 16,
// back-to-back 4 B exscans on two processes ran 13 % slower than with 64,
// a 64 KiB reduce 45 % (docs/mpi.md). Slots cost address space, not
// memory, until used.
inline constexpr int kNodeSlots = 64;
// Where a process runs ahead, it prefetches its next announcement's
// payload for writing up to this many bytes; of a longer one, only the
// first line.
inline constexpr std::size_t kNodePrefetchedPayload = 4 * 1024;
// Default bytes per chunk and process of the staging buffers.
inline constexpr std::size_t kNodeChunkBytes = 256 * 1024;
// The single copy (two processes) from this many bytes per process (and
// above inline_bytes(kind)).
inline constexpr std::size_t kNodeSingleCopyBytes = 16 * 1024;
// describe()'s race between the single copy and the chunks
// (HREDUCE_NODE_SINGLE_COPY=auto): a call of each kind of this many bytes
// per process, each way, best of kNodeRaceRounds after a warm-up.
inline constexpr std::size_t kNodeRaceBytes = 128 * 1024;
inline constexpr int kNodeRaceRounds = 5;
// A fold that only one process receives (reduce, scan): below this many
// bytes the receiver reads and folds everything itself; from here the other
// process folds a part as well and writes it into the receiver's output.
inline constexpr std::size_t kNodeSplitFoldBytes = 48 * 1024;
// Of a shared fold, the receiver takes this many bytes more than its
// fraction: the other makes two system calls to its one.
inline constexpr std::size_t kNodeSplitFoldExtraBytes = 4 * 1024;
// The chunks in flight: each process's stage and the result hold as many
// as fit in kNodeRingBytes, from 2 to kNodeMaxBuffers (buffers()).
inline constexpr std::size_t kNodeRingBytes = std::size_t{32} << 20;
inline constexpr std::size_t kNodeMaxBuffers = 8;

}  // namespace hreduce::detail
