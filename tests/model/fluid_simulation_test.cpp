// The discrete-event core against hand-computed timelines: flows sharing a
// resource, a flow's own rate, latencies and dependencies, a line that
// several members touch, and where the critical path's time went.
#include <catch2/catch.hpp>

#include "hreduce/error.hpp"
#include "src/model/fluid_simulation.hpp"

namespace md = hreduce::detail::model;

namespace {

md::Task flow(double work, std::vector<int> resources, std::vector<int> after = {}) {
  md::Task t;
  t.work = work;
  t.resources = std::move(resources);
  t.after = std::move(after);
  return t;
}

}  // namespace

TEST_CASE("two flows share a resource equally until one ends", "[model][simulation]") {
  md::FluidSimulation sim;
  const int node = sim.add_resource("node", 10);  // units per second
  const int a = sim.add_task(flow(10, {node}));
  const int b = sim.add_task(flow(20, {node}));
  const auto t = sim.run();
  // Both at 5/s until A's 10 units are done at t = 2; B then has 10 left at 10/s.
  CHECK(t[a].end == Approx(2.0));
  CHECK(t[b].end == Approx(3.0));
  CHECK(t[a].limiting_resource == node);
}

TEST_CASE("a flow alone runs at its own rate when that is lower", "[model][simulation]") {
  md::FluidSimulation sim;
  const int node = sim.add_resource("node", 10);
  md::Task t = flow(8, {node});
  t.own_rate = 4;
  const int id = sim.add_task(t);
  const auto timing = sim.run();
  CHECK(timing[id].end == Approx(2.0));
  CHECK(timing[id].limiting_resource == -1);
}

TEST_CASE("latencies and dependencies add along a chain", "[model][simulation]") {
  md::FluidSimulation sim;
  md::Task first;
  first.latency = 1.0;
  first.level = md::Level::waiting;
  first.term = "wait";
  const int a = sim.add_task(first);
  md::Task second;
  second.after = {a};
  second.latency = 0.5;
  second.work = 3;
  second.own_rate = 3;
  second.level = md::Level::between_nodes;
  second.term = "send";
  const int b = sim.add_task(second);
  const auto t = sim.run();
  CHECK(t[b].ready == Approx(1.0));
  CHECK(t[b].end == Approx(2.5));
  const md::CriticalPath path = md::critical_path(sim, t);
  CHECK(path.seconds == Approx(2.5));
  CHECK(path.level_seconds[static_cast<int>(md::Level::waiting)] == Approx(1.0));
  CHECK(path.level_seconds[static_cast<int>(md::Level::between_nodes)] == Approx(1.5));
  CHECK(path.dominant_term == "send");
}

TEST_CASE("a line that k members touch serves one access at a time", "[model][simulation]") {
  const double one_way = 100e-9;
  for (int k : {1, 2, 5, 16}) {
    md::FluidSimulation sim;
    const int line = sim.add_resource("line", 1 / one_way);
    md::Task join;
    for (int i = 0; i < k; ++i) join.after.push_back(sim.add_task(flow(1, {line})));
    const int j = sim.add_task(join);
    CHECK(sim.run()[j].end == Approx(k * one_way));
  }
}

TEST_CASE("the path follows the dependency that ended last", "[model][simulation]") {
  md::FluidSimulation sim;
  md::Task quick, slow, after;
  quick.latency = 1, quick.term = "quick";
  slow.latency = 3, slow.term = "slow";
  const int q = sim.add_task(quick), s = sim.add_task(slow);
  after.after = {q, s};
  after.latency = 1, after.term = "after";
  sim.add_task(after);
  const md::CriticalPath path = md::critical_path(sim, sim.run());
  CHECK(path.seconds == Approx(4.0));
  CHECK(path.dominant_term == "slow");
  CHECK(path.dominant_seconds == Approx(3.0));
}

TEST_CASE("bad tasks and resources are refused by name", "[model][simulation][negative]") {
  md::FluidSimulation sim;
  CHECK_THROWS_WITH(sim.add_resource("none", 0), Catch::Contains("'none'"));
  md::Task t;
  t.after = {0};
  CHECK_THROWS_WITH(sim.add_task(t), Catch::Contains("not an earlier task"));
  t.after = {};
  t.resources = {3};
  CHECK_THROWS_WITH(sim.add_task(t), Catch::Contains("resource 3"));
}
