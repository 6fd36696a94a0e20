// Where two ways can serve a call of two processes, which one takes it is
// decided by what each took lately, not by its size alone: above 8 KiB up
// to the inline limit the inline way or the single copy, above the inline
// limit the chunks or the single copy.
//
// Which is faster is not a property of the size. The inline way and the
// chunks stream every input through the segment, from one core's cache to
// the other's; the single copy reads the other's input where it lies,
// which a loop on unchanged inputs finds in its cache from the call
// before. On a host whose transfers between cores slow down 4-9x for
// seconds at a time, the inline reduce of 64 KiB took 3 us or 24 us by the
// second, the single copy 8.5-9.8 us either way; with inputs rewritten
// before each call the inline way won throughout (docs/performance.md,
// "Fresh inputs"). Above the inline limit the chunks ran an allreduce of
// 1 MiB in 82 us in the quick seconds and 540 in the slow ones, the single
// copy in 120-131 either way.
//
//   measure   each process times each such call and keeps, per kind, size
//             class and way (streamed: inline or chunks by size; or the
//             single copy), the mean of its latest calls' times per
//             64 KiB (halved sums, so old calls fade) and how many calls
//             in a row took that way (its ProcessArea). A mean, not a
//             moving average: a process that runs ahead pays now and
//             then for many calls at once, when it has to wait for the
//             slots;
//   steer     node rank 0 compares the two processes' figures, tries the
//             other way again where a size class never took it or not
//             lately (sooner after the host changed), and switches a
//             class to the single copy where it is cheaper by a quarter,
//             back to the streamed way where that is cheaper by a tenth
//             (the better bet with fresh inputs);
//   agree     a switch is one word per kind in the segment's header: from
//             operation `from` on, the classes in `now` take the way their
//             size does not give, before it those in `before` (so a zeroed
//             word leaves every class to its size). Rank 0 writes it only
//             once every process has announced the operation before the
//             previous switch's `from` (so none reads `before` again), and
//             sets `from` kNodeSlots + 1 ahead: no process can announce
//             more than kNodeSlots - 1 operations past another (the
//             announcement slots), nor so read the word for more than
//             kNodeSlots past. So each reads, for every operation, the
//             classes the other reads for it: nobody waits for a way the
//             other did not take.
//
// The functions below are the pure parts: the classes, the word, and rank
// 0's decision for one class.
#pragma once

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "hreduce/team.hpp"  // CollectiveKind
#include "src/node/node_way.hpp"

namespace hreduce::detail {

// The kinds with a measured way, as kNodeRacedKinds orders them
// (reduce_scatter_block goes as reduce_scatter), and the size classes:
// above 8 KiB up to 16, 32, ..., 1024 KiB, and above 1 MiB. The inline
// limit (16 KiB; a reduce's, scan's or exscan's 128 KiB) is a class's
// bound. At 4 KiB the inline way stayed ahead of Open MPI in every round
// measured, in the host's slow seconds too (docs/performance.md), so
// nothing is tried there.
inline constexpr int kMeasuredKinds = 5;
inline constexpr int kMeasuredSizes = 8;
// How a class's figures are gathered:
//   settle   a run's first calls, which count in `run`, not in the mean;
//   calls    the calls in the mean that a way must have in each process
//            before it counts;
//   window   the calls a mean covers, about: at twice as many its sums are
//            halved.
struct MeasurePace {
  std::uint32_t settle, calls, window;
};
// Up to the inline limit a process runs ahead: a run's first calls still
// pay for what came before (one that ran up to kNodeSlots operations ahead
// is waited for) and, a class's first, for the first touch of every
// announcement slot's pages; one running ahead waits once per
// kNodeSlots / 2 calls, so a mean needs many.
inline constexpr MeasurePace kRunAheadPace{80, 64, 512};
// Above it neither way (the chunks, the single copy) runs ahead, and a
// call moves 128 KiB or more: a few calls judge it, once the chunk ring's
// 8 buffers were each touched. Trying a way costs the calls its figures
// need, and a slow try costs most here (2 MiB reduces by the chunks took
// 900-960 us in the host's slow seconds, by the single copy about 200).
inline constexpr MeasurePace kLongPace{8, 16, 64};
// Operations between rank 0's looks at a kind's figures: reading the other
// process's lines costs a transfer each, which short calls feel.
inline constexpr std::uint64_t kSteerEvery = 32;
inline constexpr std::uint64_t kSteerEveryLong = 8;
// Operations after which a class tries the way it left again:
// kRemeasureMost, but kRemeasureFirst once the class left a way that became
// dearer (the host changed phase), twice as many after each try that lost
// from then on. Trying costs about 220 calls the slower way (90 above the
// inline limit): at a 16 KiB reduce's 1.1 us inline and 4.5 us single
// copy, about 1 % of the time every 65536 operations, 17 % every 4096 (so
// only after a change, and for a few tries). With 65536 always, a class
// that left the inline way in a few slow seconds kept the single copy for
// the rest of a benchmark's row, 3-4x slower, after the host was quick again
// (`hreduce bench --mpi`, exscan of 32 KiB: 3.8 us in such runs, 1.0 in
// the others).
inline constexpr std::uint64_t kRemeasureFirst = std::uint64_t{1} << 12;
inline constexpr std::uint64_t kRemeasureMost = std::uint64_t{1} << 16;

// The measured kind's index (0 to kMeasuredKinds - 1), or -1 for none.
int measured_kind(CollectiveKind kind);
// The size class of a call of `bytes` per process, or -1 for 8 KiB or
// less; inline, since every node call asks.
inline int measured_size(std::size_t bytes) {
  constexpr std::size_t kAbove = 8 * 1024;
  if (bytes <= kAbove) return -1;
  const int s = static_cast<int>(std::bit_width((bytes - 1) / kAbove)) - 1;
  return s < kMeasuredSizes ? s : kMeasuredSizes - 1;
}
// Whether two processes pick the node way of a call of `bytes` per process
// by measure: above 8 KiB, of a measured kind, where the single copy could
// serve (the shape lets it: two processes that reach each other, a kind
// the chunks did not win the race for, elements a chunk holds) and so could
// the streamed way (the size gave the inline way or the single copy, not
// the chunks, which serve every call the single copy does). The same on
// every process: all know the call's kind, length and op, and the shape
// is the node's.
bool measures_way(CollectiveKind kind, std::size_t bytes, std::size_t elem_size, NodeWay by_size,
                  const NodeShape& shape);
// The classes whose calls all lie above `inline_bytes` (a class's bound):
// those the single copy serves by size.
std::uint8_t single_copy_by_size(std::size_t inline_bytes);

// One kind's word: from operation `from` on, the size classes whose bits
// are set in `now` take the way their size does not give; before it,
// those in `before`.
struct WayVerdict {
  std::uint64_t from = 0;
  std::uint8_t now = 0, before = 0;
  friend bool operator==(const WayVerdict&, const WayVerdict&) = default;
};
std::uint64_t encode(const WayVerdict& verdict);
WayVerdict decode(std::uint64_t word);
// The classes that take the way their size does not give in operation `op`.
std::uint8_t other_way_sizes(std::uint64_t word, std::uint64_t op);
// The classes that take the single copy in operation `op`, of a kind whose
// size gives it to the classes `by_size`.
inline std::uint8_t single_copy_sizes(std::uint64_t word, std::uint64_t op, std::uint8_t by_size) {
  return static_cast<std::uint8_t>(by_size ^ other_way_sizes(word, op));
}
// Whether the last switch (its `from`) took effect everywhere, after
// operation `op` of rank 0, every other process having announced
// `announced` or later: rank 0 did operation `from` (so its classes for
// `op` are the word's `now`) and no process reads `before` again.
inline bool switch_settled(std::uint64_t from, std::uint64_t op, std::uint64_t announced) {
  return op >= from && announced + 1 >= from;
}
// Rank 0, after operation `op`, the last switch settled: the word that
// makes the classes in `wanted` take the way their size does not give,
// from `slots` + 1 operations on, or nothing where they already do.
std::optional<std::uint64_t> switched(std::uint64_t word, std::uint64_t op, std::uint8_t wanted,
                                      std::uint64_t slots);

// What one process published of one way of one class.
struct WayFigures {
  std::uint64_t ticks = 0;  // of its latest calls this way (halved now and then)
  std::uint32_t calls = 0;  // that `ticks` covers; 0: none yet (or settling)
  std::uint32_t run = 0;    // calls in a row it took this way
  std::uint64_t last = 0;   // the operation of its latest call this way
  std::uint64_t mean() const { return calls == 0 ? 0 : ticks / calls; }
};
// One class, as rank 0 sees it: [process][way], way 0 streamed (inline or
// chunks, by size), 1 the single copy.
using ClassFigures = WayFigures[2][2];
// Rank 0's step for one class after operation `op`, the class's way
// having been switched to in operation `since`:
//   wait     too few calls this way since the switch to judge it;
//   keep     judged: this way is as cheap as the other, or cheaper;
//   retry    the other way's figures are missing or older than
//            `remeasure_after` operations: take it again to measure it;
//   switch   the other way is cheaper (by a quarter to the single copy,
//            a tenth back to the streamed way, the better bet with fresh
//            inputs).
enum class WayStep { wait, keep, retry, switch_way };
// Whether the other way is cheaper enough to switch to, a call costing
// `cost` the way taken now and `other_cost` the other (the model's
// predictions take it too: src/model/node_levels.cpp).
template <class Cost>
bool other_way_pays(bool single_copy_now, Cost cost, Cost other_cost) {
  return single_copy_now ? other_cost * 10 < cost * 9 : other_cost * 4 < cost * 3;
}
WayStep next_way_step(const ClassFigures& figures, bool single_copy_now, std::uint64_t since,
                      std::uint64_t op, std::uint64_t remeasure_after, const MeasurePace& pace);
// Whether `step` changes the class's way.
inline bool changes_way(WayStep step) {
  return step == WayStep::retry || step == WayStep::switch_way;
}

// When rank 0 tries a class's other way again, and whether the class's
// latest change was such a try.
struct Remeasure {
  std::uint64_t after = kRemeasureMost;
  bool trying = false;
  friend bool operator==(const Remeasure&, const Remeasure&) = default;
};
Remeasure after_step(Remeasure remeasure, WayStep step);

// A process's figures after one more call of `ticks` that way: the mean
// restarts with a run.
WayFigures after_call(WayFigures figures, bool same_way_as_before, std::uint64_t ticks,
                      std::uint64_t op, const MeasurePace& pace);

// A call's `ticks` per 64 KiB of its `bytes`: what a class's figures keep,
// so that their mean holds over calls of different sizes (a class spans
// twice its least size, the last any size above 1 MiB; the way tried
// after a change of size is not judged by the calls before it).
inline std::uint64_t ticks_per_64k(std::uint64_t ticks, std::size_t bytes) {
  return bytes == 0 ? ticks : ticks * 65536 / bytes;
}

// What a call's time is counted in: the time stamp counter where there is
// one (cheaper to read than the clock), which every core of a machine counts
// alike; else nanoseconds.
inline std::uint64_t measured_ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
#endif
}

}  // namespace hreduce::detail
