// The measured ways' pure parts (src/node/way_by_measure.hpp): the size
// classes, the verdict word and its horizon, one process's figures, and
// node rank 0's decision for a class, against hand-computed cases.
#include "src/node/way_by_measure.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <tuple>

namespace hreduce::detail {

namespace {

constexpr std::uint64_t kSlots = 64;  // as kNodeSlots

// A process's figures after `calls` calls of `ticks` each, the same way,
// the last in operation `last`.
WayFigures taken(std::uint32_t calls, std::uint64_t ticks, std::uint64_t last,
                 const MeasurePace& pace = kRunAheadPace) {
  WayFigures f;
  for (std::uint32_t c = 0; c < calls; ++c) {
    f = after_call(f, c > 0, ticks, last - calls + 1 + c, pace);
  }
  return f;
}

}  // namespace

TEST_CASE("the measured classes: above 8 KiB up to 16, 32, ..., 1024 KiB and above, by kind") {
  CHECK(measured_size(4096) == -1);
  CHECK(measured_size(8192) == -1);
  CHECK(measured_size(8193) == 0);
  CHECK(measured_size(16384) == 0);
  CHECK(measured_size(16385) == 1);
  CHECK(measured_size(32768) == 1);
  CHECK(measured_size(32769) == 2);
  CHECK(measured_size(65536) == 2);
  CHECK(measured_size(65537) == 3);
  CHECK(measured_size(131072) == 3);
  CHECK(measured_size(131073) == 4);
  CHECK(measured_size(262144) == 4);
  CHECK(measured_size(524288) == 5);
  CHECK(measured_size(524289) == 6);
  CHECK(measured_size(1048576) == 6);
  CHECK(measured_size(1048577) == 7);
  CHECK(measured_size(std::size_t{1} << 40) == 7);
  // The inline limits are classes' bounds: 16 KiB (allreduce,
  // reduce_scatter on two processes), 128 KiB (reduce, scan, exscan).
  CHECK(single_copy_by_size(16384) == 0b11111110);
  CHECK(single_copy_by_size(131072) == 0b11110000);
  CHECK(single_copy_by_size(512) == 0b11111111);
  CHECK(single_copy_by_size(131073) == 0b11100000);
  CHECK(single_copy_by_size(std::size_t{1} << 40) == 0);
  // A class's figures are per 64 KiB, so that 2 and 4 MiB calls of the
  // same speed (one class) weigh alike.
  CHECK(ticks_per_64k(1000, 65536) == 1000);
  CHECK(ticks_per_64k(64000, 2 << 20) == 2000);
  CHECK(ticks_per_64k(128000, 4 << 20) == 2000);
  CHECK(ticks_per_64k(1000, 16384) == 4000);
  CHECK(measured_kind(CollectiveKind::allreduce) == 0);
  CHECK(measured_kind(CollectiveKind::reduce) == 1);
  CHECK(measured_kind(CollectiveKind::reduce_scatter) == 2);
  CHECK(measured_kind(CollectiveKind::reduce_scatter_block) == 2);
  CHECK(measured_kind(CollectiveKind::scan) == 3);
  CHECK(measured_kind(CollectiveKind::exscan) == 4);
  CHECK(measured_kind(CollectiveKind::barrier) == -1);
}

TEST_CASE("which calls two processes take by measure: above 8 KiB, where both ways could serve") {
  constexpr std::size_t kChunk = 64 * 1024;
  const NodeShape pair{2, kChunk, true, 0};
  constexpr std::size_t kLong = 1 << 20;
  CHECK(measures_way(CollectiveKind::reduce, 8193, 8, NodeWay::inline_announcement, pair));
  CHECK(measures_way(CollectiveKind::allreduce, kLong, 8, NodeWay::single_copy, pair));
  CHECK(measures_way(CollectiveKind::reduce_scatter_block, kLong, 8, NodeWay::single_copy, pair));
  CHECK_FALSE(measures_way(CollectiveKind::reduce, 8192, 8, NodeWay::inline_announcement, pair));
  // The chunks by size: the single copy does not serve the call.
  CHECK_FALSE(measures_way(CollectiveKind::scan, kLong, 8, NodeWay::chunks, pair));
  CHECK_FALSE(measures_way(CollectiveKind::barrier, kLong, 8, NodeWay::single_copy, pair));
  // Elements longer than a chunk.
  CHECK_FALSE(measures_way(CollectiveKind::reduce, kLong, kChunk + 1, NodeWay::single_copy, pair));
  NodeShape three = pair, apart = pair, lost = pair;
  three.processes = 3;
  apart.single_copy = false;
  lost.chunks_won = kind_bit(CollectiveKind::reduce);
  CHECK_FALSE(measures_way(CollectiveKind::reduce, kLong, 8, NodeWay::single_copy, three));
  CHECK_FALSE(measures_way(CollectiveKind::reduce, kLong, 8, NodeWay::single_copy, apart));
  CHECK_FALSE(measures_way(CollectiveKind::reduce, kLong, 8, NodeWay::single_copy, lost));
  CHECK(measures_way(CollectiveKind::allreduce, kLong, 8, NodeWay::single_copy, lost));
}

TEST_CASE(
    "a verdict word says which classes leave their size's way before and from its operation") {
  const WayVerdict v{1000, 0b10000101, 0b010};
  CHECK(decode(encode(v)) == v);
  CHECK(other_way_sizes(encode(v), 999) == 0b010);
  CHECK(other_way_sizes(encode(v), 1000) == 0b10000101);
  // Inline up to 128 KiB: those classes take the single copy where the
  // word says; above it the single copy but where the word says (chunks).
  const std::uint8_t by_size = 0b11110000;
  CHECK(single_copy_sizes(encode(v), 999, by_size) == 0b11110010);
  CHECK(single_copy_sizes(encode(v), 1000, by_size) == 0b01110101);
  // A new segment: every class takes its size's way.
  CHECK(single_copy_sizes(0, 1, by_size) == by_size);
  CHECK(single_copy_sizes(0, 1, 0) == 0);
}

TEST_CASE(
    "a switch waits until every process is past the last one, and takes effect a round of "
    "slots and one ahead") {
  // The last switch took effect from operation 1000: settled once rank 0
  // did it and the other announced 999 (neither reads `before` again).
  CHECK_FALSE(switch_settled(1000, 999, 999));
  CHECK_FALSE(switch_settled(1000, 1000, 998));
  CHECK(switch_settled(1000, 1000, 999));
  CHECK(switch_settled(1000, 5000, 4937));
  CHECK(switch_settled(0, 0, 0));  // a new segment's word
  const std::uint64_t word = encode({1000, 0b001, 0});
  CHECK_FALSE(switched(word, 1010, 0b001, kSlots));  // nothing to change
  const auto next = switched(word, 1010, 0b011, kSlots);
  REQUIRE(next);
  CHECK(decode(*next) == WayVerdict{1010 + kSlots + 1, 0b011, 0b001});
}

TEST_CASE("every operation another process may decide reads the same classes in both words") {
  // Where rank 0 writes after operation `op`, the other process has
  // announced some `announced` up to kSlots - 1 operations ahead or behind,
  // and may read the word for any operation from announced + 1 to op +
  // kSlots: whichever of the two words it reads for one, it must decide
  // it as rank 0 does. Rank 0 writes only once the last switch settled.
  std::mt19937_64 random(7);
  std::uint64_t word = 0;
  int switches = 0, unsettled = 0;
  for (std::uint64_t op = kSlots; op < 40000; op += 1 + random() % 40) {
    const std::uint64_t announced = op - (kSlots - 1) + random() % (2 * kSlots - 1);
    if (!switch_settled(decode(word).from, op, announced)) {
      ++unsettled;
      continue;
    }
    REQUIRE(other_way_sizes(word, op) == decode(word).now);  // what rank 0 steers from
    const auto wanted = static_cast<std::uint8_t>(random() % 256);
    const auto next = switched(word, op, wanted, kSlots);
    if (!next) continue;
    ++switches;
    for (std::uint64_t other = std::min(op, announced) + 1; other <= op + kSlots; ++other) {
      INFO("switch at " << op << ", the other announced " << announced << ", operation " << other);
      REQUIRE(other_way_sizes(word, other) == other_way_sizes(*next, other));
    }
    CHECK(other_way_sizes(*next, op + kSlots + 1) == wanted);
    word = *next;
  }
  CHECK(switches > 300);
  CHECK(unsettled > 100);
}

TEST_CASE("a process's figures: a run's first calls settle, then a mean that old calls leave") {
  WayFigures f = taken(kRunAheadPace.settle, 500, 100);
  CHECK(f.run == kRunAheadPace.settle);
  CHECK(f.calls == 0);  // still settling
  CHECK(f.mean() == 0);
  f = after_call(f, true, 100, 101, kRunAheadPace);
  CHECK(f.mean() == 100);
  CHECK(f.last == 101);
  for (int c = 0; c < 3000; ++c) {
    f = after_call(f, true, c < 1500 ? 100 : 300, 102 + c, kRunAheadPace);
  }
  CHECK(f.calls < 2 * kRunAheadPace.window);
  CHECK(f.mean() > 250);  // the latest calls weigh most
  // Another way in between: the run starts again, settling.
  f = after_call(f, false, 50, 9000, kRunAheadPace);
  CHECK(f.run == 1);
  CHECK(f.calls == 0);
  // Above the inline limit a few calls settle, and the mean follows the
  // latest calls within a few dozen.
  WayFigures g = taken(kLongPace.settle, 500, 100, kLongPace);
  CHECK(g.calls == 0);
  g = after_call(g, true, 100, 101, kLongPace);
  CHECK(g.mean() == 100);
  for (std::uint32_t c = 0; c < 2 * kLongPace.window; ++c) {
    g = after_call(g, true, 400, 102 + c, kLongPace);
  }
  CHECK(g.calls < 2 * kLongPace.window);
  CHECK(g.mean() > 350);
}

TEST_CASE("rank 0 keeps a class's way until both processes took it long enough since the switch") {
  const std::uint64_t op = 50000, since = 40000;
  ClassFigures figures;
  constexpr std::uint32_t kEnough = kRunAheadPace.settle + kRunAheadPace.calls;
  figures[0][1] = figures[1][1] = taken(kEnough + 10, 900, 39000);  // single copy, earlier
  figures[0][0] = taken(kEnough - 1, 2000, op);                     // too few inline calls
  figures[1][0] = taken(kEnough + 10, 2000, op);
  CHECK(next_way_step(figures, false, since, op, kRemeasureFirst, kRunAheadPace) == WayStep::wait);
  figures[0][0] = taken(kEnough + 10, 2000, since - 1);  // none since the switch
  CHECK(next_way_step(figures, false, since, op, kRemeasureFirst, kRunAheadPace) == WayStep::wait);
  figures[0][0] = taken(kEnough, 2000, op);
  // Now judged: the single copy is cheaper.
  CHECK(next_way_step(figures, false, since, op, kRemeasureMost, kRunAheadPace) ==
        WayStep::switch_way);
}

TEST_CASE("rank 0 tries a way never taken or long left, and switches where the other pays") {
  const std::uint64_t op = 200000, since = 190000;
  constexpr std::uint32_t kEnough = kRunAheadPace.settle + kRunAheadPace.calls;
  auto both = [](ClassFigures& f, int way, WayFigures w) { f[0][way] = f[1][way] = w; };
  auto step = [&](const ClassFigures& f, bool single, std::uint64_t after = kRemeasureMost) {
    return next_way_step(f, single, since, op, after, kRunAheadPace);
  };
  ClassFigures figures;
  both(figures, 0, taken(kEnough, 1000, op));
  // Never took the single copy: try it.
  CHECK(step(figures, false) == WayStep::retry);
  // Took it lately, 20 % cheaper: the inline way stays (a quarter is asked).
  both(figures, 1, taken(kEnough, 800, op - 1000));
  CHECK(step(figures, false) == WayStep::keep);
  // 30 % cheaper: switch.
  both(figures, 1, taken(kEnough, 700, op - 1000));
  CHECK(step(figures, false) == WayStep::switch_way);
  // Not taken for the operations asked: try it again, whatever it cost.
  both(figures, 1, taken(kEnough, 5000, op - kRemeasureMost - 1));
  CHECK(step(figures, false) == WayStep::retry);
  CHECK(step(figures, false, kRemeasureMost + 1) == WayStep::keep);
  both(figures, 1, taken(kEnough, 5000, op - kRemeasureFirst - 1));
  CHECK(step(figures, false, kRemeasureFirst) == WayStep::retry);
  CHECK(step(figures, false, 2 * kRemeasureFirst) == WayStep::keep);
  // On the single copy, back to the inline way where that is 10 % cheaper.
  both(figures, 1, taken(kEnough, 1000, op));
  both(figures, 0, taken(kEnough, 950, op - 1000));
  CHECK(step(figures, true) == WayStep::keep);
  both(figures, 0, taken(kEnough, 850, op - 1000));
  CHECK(step(figures, true) == WayStep::switch_way);
  // The slower process's mean is what a way costs.
  figures[1][0] = taken(kEnough, 1500, op - 1000);
  CHECK(step(figures, true) == WayStep::keep);
  CHECK_FALSE(changes_way(WayStep::wait));
  CHECK_FALSE(changes_way(WayStep::keep));
  CHECK(changes_way(WayStep::retry));
  CHECK(changes_way(WayStep::switch_way));
}

TEST_CASE("tries of the way left come sooner after a change, later while they lose") {
  Remeasure r;
  CHECK(r.after == kRemeasureMost);  // a host that does not change: as rarely as ever
  CHECK(after_step(r, WayStep::wait) == r);
  CHECK(after_step(r, WayStep::keep) == r);
  r = after_step(after_step(r, WayStep::retry), WayStep::switch_way);  // a first try lost
  CHECK(r == Remeasure{kRemeasureMost, false});
  // The way taken became dearer on its own figures (the host changed): soon.
  r = after_step(r, WayStep::switch_way);
  CHECK(r == Remeasure{kRemeasureFirst, false});
  // Tries that lose (the class switches back) wait twice as long each time.
  std::uint64_t expected = kRemeasureFirst;
  for (int t = 0; t < 8; ++t) {
    r = after_step(r, WayStep::retry);
    CHECK(r.trying);
    CHECK(r.after == expected);
    CHECK(after_step(r, WayStep::wait) == r);  // still measuring the try
    r = after_step(r, WayStep::switch_way);
    expected = std::min(expected * 2, kRemeasureMost);
    CHECK_FALSE(r.trying);
    CHECK(r.after == expected);
  }
  CHECK(r.after == kRemeasureMost);
  // A try that holds its own won: the class stays on it, tries as often.
  r = after_step(after_step(r, WayStep::retry), WayStep::keep);
  CHECK(r == Remeasure{kRemeasureMost, false});
  r = after_step(after_step(Remeasure{kRemeasureFirst, false}, WayStep::retry), WayStep::keep);
  CHECK(r == Remeasure{kRemeasureFirst, false});
}

// Rank 0's loop for one class, as NodeGroup::steer_ways runs it, both
// processes in step, over a host whose streamed calls (inline or chunks)
// cost 1 (quick) or 8 (slow) against the single copy's 4 either way.
struct SteeredClass {
  SteeredClass(const MeasurePace& p, std::uint64_t every) : pace(p), steer_every(every) {}
  MeasurePace pace;
  std::uint64_t steer_every;
  ClassFigures figures;
  std::uint64_t word = 0, op = 0;
  Remeasure remeasure;
  std::uint64_t single_ops = 0, tries = 0;

  bool single_now() const { return other_way_sizes(word, op + 1) != 0; }
  // Runs `ops` operations in which a streamed call costs `streamed_cost`.
  void run(std::uint64_t ops, std::uint64_t streamed_cost) {
    for (std::uint64_t i = 0; i < ops; ++i) {
      ++op;
      const bool single = other_way_sizes(word, op) != 0;
      const int way = single ? 1 : 0;
      const std::uint64_t ticks = single ? 4 : streamed_cost;
      for (auto& process : figures) {
        const bool same = process[way].last > process[1 - way].last;
        process[way] = after_call(process[way], same, ticks * 100, op, pace);
      }
      single_ops += single ? 1 : 0;
      const std::uint64_t since = decode(word).from;
      if (op % steer_every != 0 || !switch_settled(since, op, op)) continue;
      const WayStep step = next_way_step(figures, single, since, op, remeasure.after, pace);
      remeasure = after_step(remeasure, step);
      if (!changes_way(step)) continue;
      tries += step == WayStep::retry ? 1 : 0;
      word = *switched(word, op, single ? 0 : 1, kSlots);
    }
  }
};

// After a slow spell the class is back on the streamed way within
// kRemeasureFirst operations and a try's calls (with a fixed
// kRemeasureMost, 65536); while a phase lasts, tries grow rare.
TEST_CASE(
    "a class steered through the host's phases leaves a wrong way soon and stays on a right one") {
  SteeredClass c{kRunAheadPace, kSteerEvery};
  c.run(20000, 1);  // quick: measured both, settled inline
  CHECK_FALSE(c.single_now());
  c.run(3000, 8);  // slow: the single copy
  CHECK(c.single_now());
  // Quick again: the single copy for kRemeasureFirst operations at most,
  // then inline (a try of the single copy comes after as many again).
  const std::uint64_t before = c.single_ops;
  c.run(kRemeasureFirst + 1000, 1);
  CHECK_FALSE(c.single_now());
  CHECK(c.single_ops - before < kRemeasureFirst + 500);
  // A long quick phase: the single copy is tried ever more rarely.
  c.tries = c.single_ops = 0;
  c.run(20 * kRemeasureMost, 1);
  CHECK((!c.single_now() || c.remeasure.trying));  // inline, but for a try
  CHECK(c.tries <= 20 + 5);
  CHECK(c.single_ops < 20 * kRemeasureMost / 50);  // under 2 % of the calls
  // A long slow phase: the single copy, inline tried ever more rarely.
  c.run(3000, 8);
  CHECK(c.single_now());
  c.tries = 0;
  c.run(20 * kRemeasureMost, 8);
  CHECK((c.single_now() || c.remeasure.trying));
  CHECK(c.tries <= 20 + 5);
}

// A try that loses costs the calls its figures need, the steering's look
// and the switch back's lead of kSlots + 1: under 250 calls up to the
// inline limit, under 100 above it.
TEST_CASE("a try of the dearer way costs fewer calls above the inline limit") {
  for (const auto& [pace, every, most] :
       {std::tuple{kRunAheadPace, kSteerEvery, std::uint64_t{250}},
        std::tuple{kLongPace, kSteerEveryLong, std::uint64_t{100}}}) {
    SteeredClass c{pace, every};
    c.run(20000, 8);  // slow: settled on the single copy
    REQUIRE(c.single_now());
    c.tries = c.single_ops = 0;
    const std::uint64_t ops = 20 * kRemeasureMost;
    c.run(ops, 8);
    CHECK((c.single_now() || c.remeasure.trying));
    REQUIRE(c.tries > 5);
    const std::uint64_t tried = ops - c.single_ops;
    INFO("pace settle " << pace.settle << ": " << c.tries << " tries, " << tried << " calls");
    CHECK(tried <= c.tries * most);
    CHECK(tried >= c.tries * (pace.settle + pace.calls + kSlots));
  }
}

}  // namespace hreduce::detail
