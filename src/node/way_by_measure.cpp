#include "src/node/way_by_measure.hpp"

#include <algorithm>
#include <bit>

namespace hreduce::detail {

int measured_kind(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::allreduce: return 0;
    case CollectiveKind::reduce: return 1;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::reduce_scatter_block: return 2;
    case CollectiveKind::scan: return 3;
    case CollectiveKind::exscan: return 4;
    default: return -1;
  }
}

bool measures_way(CollectiveKind kind, std::size_t bytes, std::size_t elem_size, NodeWay by_size,
                  const NodeShape& shape) {
  return measured_size(bytes) >= 0 && by_size != NodeWay::chunks && shape.processes == 2 &&
         shape.single_copy && (shape.chunks_won & kind_bit(kind)) == 0 &&
         elem_size <= shape.chunk_bytes && measured_kind(kind) >= 0;
}

std::uint8_t single_copy_by_size(std::size_t inline_bytes) {
  // Class s starts above 8 KiB << s: the first class wholly above the
  // limit is the bit width of (limit - 1) / 8 KiB.
  const int first =
      inline_bytes == 0 ? 0 : static_cast<int>(std::bit_width((inline_bytes - 1) / (8 * 1024)));
  return first >= kMeasuredSizes ? 0 : static_cast<std::uint8_t>(0xFFu << first);
}

namespace {
constexpr int kFromShift = 16;
}  // namespace

std::uint64_t encode(const WayVerdict& verdict) {
  return verdict.from << kFromShift | std::uint64_t{verdict.now} << 8 | verdict.before;
}

WayVerdict decode(std::uint64_t word) {
  return {word >> kFromShift, static_cast<std::uint8_t>(word >> 8),
          static_cast<std::uint8_t>(word)};
}

std::uint8_t other_way_sizes(std::uint64_t word, std::uint64_t op) {
  const WayVerdict verdict = decode(word);
  return op >= verdict.from ? verdict.now : verdict.before;
}

std::optional<std::uint64_t> switched(std::uint64_t word, std::uint64_t op, std::uint8_t wanted,
                                      std::uint64_t slots) {
  const WayVerdict verdict = decode(word);
  if (wanted == verdict.now) return std::nullopt;
  return encode({op + slots + 1, wanted, verdict.now});
}

WayStep next_way_step(const ClassFigures& figures, bool single_copy_now, std::uint64_t since,
                      std::uint64_t op, std::uint64_t remeasure_after, const MeasurePace& pace) {
  const int now = single_copy_now ? 1 : 0, other = 1 - now;
  // Not taken this way since the switch, or too few calls in its mean, in
  // either process: no figure of this way that is its own yet (a class
  // nobody calls any more stays as it is).
  for (const auto& process : figures) {
    if (process[now].last < since || process[now].calls < pace.calls) return WayStep::wait;
  }
  const bool other_known = figures[0][other].calls != 0 && figures[1][other].calls != 0;
  const std::uint64_t other_last = std::min(figures[0][other].last, figures[1][other].last);
  if (!other_known || op > other_last + remeasure_after) return WayStep::retry;
  // What a call costs the node: the slower process's mean.
  const std::uint64_t cost = std::max(figures[0][now].mean(), figures[1][now].mean());
  const std::uint64_t other_cost = std::max(figures[0][other].mean(), figures[1][other].mean());
  return other_way_pays(single_copy_now, cost, other_cost) ? WayStep::switch_way : WayStep::keep;
}

Remeasure after_step(Remeasure remeasure, WayStep step) {
  switch (step) {
    case WayStep::wait: return remeasure;
    case WayStep::retry: return {remeasure.after, true};
    case WayStep::keep:  // a try that held its own won: the host changed
      return {remeasure.after, false};
    case WayStep::switch_way:
      // Back from a try that lost: wait longer before the next. Else the
      // way taken became dearer, the host changed: try again soon.
      if (!remeasure.trying) return {kRemeasureFirst, false};
      return {std::min(remeasure.after * 2, kRemeasureMost), false};
  }
  return remeasure;
}

WayFigures after_call(WayFigures figures, bool same_way_as_before, std::uint64_t ticks,
                      std::uint64_t op, const MeasurePace& pace) {
  if (!same_way_as_before) figures.run = 0;
  if (figures.run < UINT32_MAX) ++figures.run;
  figures.last = op;
  if (figures.run <= pace.settle) {
    figures.ticks = 0;
    figures.calls = 0;
    return figures;
  }
  figures.ticks += ticks;
  if (++figures.calls >= 2 * pace.window) {
    figures.ticks /= 2;
    figures.calls /= 2;
  }
  return figures;
}

}  // namespace hreduce::detail
