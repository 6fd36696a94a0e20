// The measured ways, NodeGroup's part (way_by_measure.hpp has the picture):
// which calls are measured, each process's figures, and node rank 0
// steering a kind's size classes between the streamed way (inline or
// chunks) and the single copy.
#include "src/node/node_areas.hpp"
#include "src/node/node_group.hpp"
#include "src/node/way_by_measure.hpp"

namespace hreduce::detail {

namespace {

// Read apart, the words may be of two different calls: a mean off by a
// call, which steering can bear.
WayFigures figures_of(const MeasuredClass& c, int way) {
  return {c.ticks[way].load(std::memory_order_relaxed),
          c.calls[way].load(std::memory_order_relaxed), c.run[way].load(std::memory_order_relaxed),
          c.last[way].load(std::memory_order_relaxed)};
}

// Above the inline limit: the classes its size gives to the single copy.
bool above_inline(std::uint8_t single_copy_by_size, int size) {
  return (single_copy_by_size >> size & 1) != 0;
}

// Above the inline limit no way runs ahead.
const MeasurePace& pace_of(std::uint8_t single_copy_by_size, int size) {
  return above_inline(single_copy_by_size, size) ? kLongPace : kRunAheadPace;
}

}  // namespace

NodeGroup::MeasuredCall NodeGroup::measured_call(CollectiveKind kind, std::size_t bytes,
                                                 std::size_t elem_size, NodeWay way) const {
  // The size first: it rules out most calls, the short ones, at once.
  // describe() settled the shape for every process alike.
  const int s = measured_size(bytes);
  if (s < 0 || !measures_way(kind, bytes, elem_size, way, shape())) return {};
  return {measured_kind(kind), s, single_copy_by_size(node_inline_bytes(size_, kind))};
}

bool NodeGroup::takes_single_copy(MeasuredCall call, std::uint64_t op) const {
  const std::uint64_t word = header().way_verdicts[call.kind].load(std::memory_order_acquire);
  return (single_copy_sizes(word, op, call.single_copy_by_size) >> call.size & 1) != 0;
}

std::optional<NodeWay> NodeGroup::measured_way(CollectiveKind kind, std::size_t bytes,
                                               NodeWay way) const {
  const MeasuredCall call = measured_call(kind, bytes, 1, way);
  if (call.kind < 0) return std::nullopt;
  return takes_single_copy(call, ops_ + 1) ? NodeWay::single_copy : streamed_way(way);
}

void NodeGroup::record_way(MeasuredCall call, bool single_copy, std::uint64_t ticks) {
  const int w = single_copy ? 1 : 0;
  ++measured_calls_[static_cast<std::size_t>(w)];
  MeasuredClass& mine = area(rank_).measured[call.kind][call.size];
  WayFigures figures = figures_of(mine, w);
  // This way was the class's latest if its latest call is later than the
  // other way's.
  const bool same_way = figures.last > mine.last[1 - w].load(std::memory_order_relaxed);
  figures =
      after_call(figures, same_way, ticks, ops_, pace_of(call.single_copy_by_size, call.size));
  mine.ticks[w].store(figures.ticks, std::memory_order_relaxed);
  mine.calls[w].store(figures.calls, std::memory_order_relaxed);
  mine.run[w].store(figures.run, std::memory_order_relaxed);
  mine.last[w].store(figures.last, std::memory_order_relaxed);
  if (rank_ == 0) steer_ways(call);
}

std::uint64_t NodeGroup::announced_by_other(std::uint64_t from) const {
  // Announcing ops_, this process saw the other announce ops_ - kNodeSlots
  // + 1 (wait_for_slot): that settles a switch that far back without
  // reading the other's lines. A later one is settled once the other
  // announced from - 1: that slot then holds from - 1 or a later
  // operation, else one kNodeSlots or more before.
  const std::uint64_t seen = ops_ >= kNodeSlots ? ops_ - kNodeSlots + 1 : 0;
  if (from <= seen + 1 || from > ops_) return seen;
  const std::uint64_t before = from - 1;
  const std::uint64_t there =
      area(1 - rank_).slot[before % kNodeSlots].seq.load(std::memory_order_acquire);
  return there >= before ? before : seen;
}

void NodeGroup::steer_ways(MeasuredCall call) {
  const int kind = call.kind;
  // Reading the other process's figures costs a transfer of its lines:
  // once per kSteerEvery operations at most, or kSteerEveryLong after a
  // call above the inline limit (little beside such a call).
  if (ops_ < measured_next_steer_[kind]) return;
  measured_next_steer_[kind] =
      ops_ + (above_inline(call.single_copy_by_size, call.size) ? kSteerEveryLong : kSteerEvery);
  std::atomic<std::uint64_t>& verdict = header().way_verdicts[kind];
  const std::uint64_t word = verdict.load(std::memory_order_relaxed);  // only rank 0 writes it
  const std::uint64_t since = decode(word).from;
  if (!switch_settled(since, ops_, announced_by_other(since))) return;
  const std::uint8_t other_now = other_way_sizes(word, ops_);
  const auto single_now = static_cast<std::uint8_t>(call.single_copy_by_size ^ other_now);
  std::uint8_t wanted = other_now;
  for (int s = 0; s < kMeasuredSizes; ++s) {
    ClassFigures figures;
    for (int q = 0; q < 2; ++q) {
      const MeasuredClass& theirs = area(q).measured[kind][s];
      for (int w = 0; w < 2; ++w) figures[q][w] = figures_of(theirs, w);
    }
    const bool single = (single_now >> s & 1) != 0;
    Remeasure& remeasure = measured_remeasure_[kind][s];
    const WayStep step = next_way_step(figures, single, since, ops_, remeasure.after,
                                       pace_of(call.single_copy_by_size, s));
    remeasure = after_step(remeasure, step);
    if (changes_way(step)) wanted = static_cast<std::uint8_t>(wanted ^ (1u << s));
  }
  // Released: a process that reads this word also sees what came before.
  if (const auto next = switched(word, ops_, wanted, kNodeSlots)) {
    verdict.store(*next, std::memory_order_release);
  }
}

}  // namespace hreduce::detail
