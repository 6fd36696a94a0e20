// Time per level (`hreduce bench --breakdown`): the level clock splits a
// thread's window into levels without overlap, so they add up to it; the
// hooks charge only threads that started a clock; the bench's records
// carry the levels into the JSON and the plot. Timing here only ever
// checks lower bounds (a busy machine makes spins longer, never shorter)
// and the sum, which the clock's partition keeps exact whatever the load.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/team.hpp"
#include "src/common/level_clock.hpp"
#include "src/compare/comparison.hpp"
#include "src/compare/record.hpp"
#include "src/compare/sampling.hpp"

namespace {

using hreduce::detail::CallLevel;
using hreduce::detail::LevelClock;
using hreduce::detail::LevelScope;
using hreduce::detail::LevelSeconds;
namespace cmp = hreduce::detail::compare;
using Steady = std::chrono::steady_clock;

constexpr double kMs = 1e-3;

// Busy for at least `seconds` of wall time.
void spin(double seconds) {
  const auto until = Steady::now() + std::chrono::duration<double>(seconds);
  while (Steady::now() < until) {
  }
}

double since(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

cmp::Record hreduce_record(std::size_t bytes, double median, std::vector<double> levels) {
  cmp::Record r;
  r.collective = "allreduce";
  r.implementation = "hreduce";
  r.type = "double";
  r.op = "sum";
  r.members = 2;
  r.bytes_per_member = bytes;
  r.median_seconds = median;
  r.gbps = 4.0 * bytes / median / 1e9;
  r.samples = 7;
  const char* names[] = {"inside_process", "node_segment", "between_nodes", "waiting"};
  for (std::size_t i = 0; i < levels.size(); ++i) r.levels.push_back({names[i], levels[i]});
  return r;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("level names are the bench's column and JSON names", "[levels]") {
  CHECK(level_name(CallLevel::inside_process) == "inside_process");
  CHECK(level_name(CallLevel::node_segment) == "node_segment");
  CHECK(level_name(CallLevel::between_nodes) == "between_nodes");
  CHECK(level_name(CallLevel::waiting) == "waiting");
}

TEST_CASE(
    "nested scopes split the clock's window: each level gets its own time, the sum the "
    "whole window",
    "[levels]") {
  LevelClock clock;
  const auto start = Steady::now();
  clock.start();
  spin(2 * kMs);  // no scope: the process's own
  {
    LevelScope node(CallLevel::node_segment);
    spin(3 * kMs);
    {
      LevelScope wait(CallLevel::waiting);
      spin(1 * kMs);
    }
    spin(1 * kMs);  // back in the node level
  }
  {
    LevelScope messages(CallLevel::between_nodes);
    spin(2 * kMs);
  }
  clock.stop();
  const double window = since(start);
  const LevelSeconds s = clock.seconds();
  CHECK(s[CallLevel::inside_process] >= 2 * kMs * 0.99);
  CHECK(s[CallLevel::node_segment] >= 4 * kMs * 0.99);
  CHECK(s[CallLevel::waiting] >= 1 * kMs * 0.99);
  CHECK(s[CallLevel::between_nodes] >= 2 * kMs * 0.99);
  // Exact but for the clock's calibration against steady_clock (5 ms,
  // reads bracketed within 2 µs) and the reads around start() and stop().
  CHECK(s.total() == Approx(window).epsilon(0.01));
  CHECK(s.total() <= window * 1.005);
}

TEST_CASE(
    "a scope of the level already current, and a scope left by an exception, leave the "
    "level as it was",
    "[levels]") {
  LevelClock clock;
  clock.start();
  {
    LevelScope node(CallLevel::node_segment);
    {
      LevelScope again(CallLevel::node_segment);
      spin(1 * kMs);
    }
    spin(1 * kMs);
  }
  try {
    LevelScope wait(CallLevel::waiting);
    spin(1 * kMs);
    throw std::runtime_error("leaves the scope");
  } catch (const std::runtime_error&) {
  }
  spin(2 * kMs);  // inside_process again
  clock.stop();
  const LevelSeconds s = clock.seconds();
  CHECK(s[CallLevel::node_segment] >= 2 * kMs * 0.99);
  CHECK(s[CallLevel::waiting] >= 1 * kMs * 0.99);
  CHECK(s[CallLevel::inside_process] >= 2 * kMs * 0.99);
  CHECK(s[CallLevel::between_nodes] == 0);
}

TEST_CASE("scopes charge only the thread that started a clock, and only while it runs",
          "[levels]") {
  CHECK(hreduce::detail::t_level_clock == nullptr);
  LevelClock clock;
  clock.start();
  std::thread other([] {
    CHECK(hreduce::detail::t_level_clock == nullptr);
    LevelScope wait(CallLevel::waiting);
    spin(2 * kMs);
  });
  other.join();
  {
    LevelScope node(CallLevel::node_segment);
    spin(1 * kMs);
  }
  clock.stop();
  CHECK(hreduce::detail::t_level_clock == nullptr);
  const LevelSeconds stopped = clock.seconds();
  {
    LevelScope wait(CallLevel::waiting);  // no clock: nothing charged
    spin(1 * kMs);
  }
  const LevelSeconds later = clock.seconds();
  CHECK(later.seconds == stopped.seconds);
  CHECK(stopped[CallLevel::node_segment] >= 1 * kMs * 0.99);
  // The other thread's wait is this thread's own time (it was joining).
  CHECK(stopped[CallLevel::waiting] == 0);
  clock.reset();
  CHECK(clock.seconds().total() == 0);
}

TEST_CASE(
    "levels_at_median: the levels of the median sample, or of the two middle ones "
    "weighted as the median's time",
    "[levels]") {
  // A sample's levels: its time split 1 : 3 between inside_process and waiting.
  auto level = [](double time) {
    LevelSeconds s;
    s[CallLevel::inside_process] = time / 4;
    s[CallLevel::waiting] = 3 * time / 4;
    return s;
  };
  // Bimodal samples, fast and slow: the median's levels are a slow sample's
  // own, where a median per level over its neighbours would mix in the fast.
  const std::vector<double> five = {0.4, 20, 7, 0.35, 3.4};
  std::vector<LevelSeconds> levels;
  for (double t : five) levels.push_back(level(t));
  const LevelSeconds odd = cmp::levels_at_median(five, levels);
  CHECK(odd[CallLevel::waiting] == Approx(3 * 3.4 / 4));
  CHECK(odd.total() == Approx(cmp::summarize(five).median));
  // An even count: halfway between the two middle samples, as the median.
  const std::vector<double> four = {1, 8, 2, 6};
  levels.clear();
  for (double t : four) levels.push_back(level(t));
  const LevelSeconds even = cmp::levels_at_median(four, levels);
  CHECK(even.total() == Approx(cmp::summarize(four).median));
  CHECK(even[CallLevel::inside_process] == Approx(1.0));
  CHECK(cmp::levels_at_median({}, {}).total() == 0);
}

TEST_CASE("a record's levels become the JSON's levels object, in level order", "[levels]") {
  const cmp::Record with = hreduce_record(4096, 1e-6, {4e-7, 0, 0, 6e-7});
  cmp::Record without = with;
  without.levels.clear();
  const std::string json = cmp::to_json({with, without});
  CHECK(count(json, "\"levels\": {") == 1);
  CHECK(json.find("\"levels\": {\"inside_process\": 4e-07, \"node_segment\": 0, "
                  "\"between_nodes\": 0, \"waiting\": 6e-07}}") != std::string::npos);
}

TEST_CASE("the plot stacks each record's levels in a bar per size, below the GB/s panels",
          "[levels]") {
  std::vector<cmp::Record> records = {hreduce_record(8, 4e-7, {1e-7, 1e-7, 1e-7, 1e-7}),
                                      hreduce_record(4096, 1e-6, {5e-7, 0, 0, 5e-7})};
  cmp::Record plain = records[0];
  plain.implementation = "limit";
  plain.levels.clear();
  records.push_back(plain);
  const std::string svg = cmp::to_svg(records, "t");
  CHECK(count(svg, "class=\"level-panel\"") == 1);
  CHECK(count(svg, "class=\"level\" data-level=\"waiting\"") == 2);
  // A level the call never entered gets no rectangle.
  CHECK(count(svg, "class=\"level\" data-level=\"node_segment\"") == 1);
  CHECK(svg.find(">time per level") != std::string::npos);
  CHECK(svg.find("class=\"level-panel\"") > svg.find("class=\"panel\""));
  records.pop_back();
  for (cmp::Record& r : records) r.levels.clear();
  CHECK(cmp::to_svg(records, "t").find("level-panel") == std::string::npos);
}

TEST_CASE(
    "measure_case with breakdown gives hreduce's record every level, adding up to its "
    "median; in one process, no node level and no messages",
    "[levels][measure]") {
  hreduce::TeamOptions options;
  options.members = 2;
  hreduce::Team team(options);
  cmp::SamplingOptions sampling;
  sampling.min_seconds = 0;
  sampling.min_samples = 5;
  sampling.max_samples = 5;
  sampling.settle_seconds = 0;
  sampling.breakdown = true;
  cmp::Case c;
  c.collective = GENERATE(cmp::Collective::allreduce, cmp::Collective::scan);
  c.bytes_per_member = GENERATE(as<std::size_t>{}, 8, 64 * 1024);
  INFO(cmp::name_of(c.collective) << " " << c.bytes_per_member << " B");
  const cmp::CaseResult result = cmp::measure_case(
      team, c, {cmp::Implementation::hreduce, cmp::Implementation::limit}, sampling);
  REQUIRE(result.records.size() == 2);
  const cmp::Record& ours = result.records[0];
  REQUIRE(ours.levels.size() == 4);
  CHECK(result.records[1].levels.empty());
  double sum = 0;
  for (const cmp::LevelTime& l : ours.levels) {
    CHECK(l.seconds >= 0);
    sum += l.seconds;
  }
  CHECK(ours.levels[0].level == "inside_process");
  CHECK(ours.levels[0].seconds > 0);
  CHECK(ours.levels[1].seconds == 0);  // node_segment
  CHECK(ours.levels[2].seconds == 0);  // between_nodes
  CHECK(ours.levels[3].seconds > 0);   // waiting: each call waits for the other member
  // How close the sum comes to the median is the bench's check (15 %,
  // docs/benchmarking.md), over many samples: a member held up outside the
  // timed stretch of a sample by a busy machine moves it far (the clock's
  // partition itself is exact: the test above).
  CHECK(sum > 0);
}
