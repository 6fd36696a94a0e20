// The model's arithmetic against hand-computed cases on a toy machine whose
// figures are round numbers: a two-member tree, a fold that shares one
// NUMA node's bandwidth, a ring allreduce's messages, recursive doubling's
// steps, and the runtime's own decisions showing through.
#include <cmath>

#include <catch2/catch.hpp>

#include "hreduce/error.hpp"
#include "src/model/explain.hpp"
#include "src/model/machines.hpp"
#include "src/model/message_steps.hpp"
#include "src/model/prediction.hpp"
#include "src/node/node_group.hpp"
#include "src/probe/pairs.hpp"

namespace md = hreduce::detail::model;
namespace pr = hreduce::detail::probe;

namespace {

constexpr double kOneWay = 100e-9;    // every pair of cores
constexpr double kFoldCached = 10e9;  // vector bytes per second, in cache
constexpr double kThreadFold = 4e9;   // one thread, from memory (vector bytes/s)
constexpr double kNodeFold = 8e9;     // the whole NUMA node
constexpr double kThreadCopy = 3e9, kNodeCopy = 6e9;
constexpr double kAlpha = 2e-6, kLink = 5e9;
// Without a by-size curve a message of b bytes takes kAlpha + b / kLink; its
// latency term is the smallest message's (8 bytes), its transfer the rest.
constexpr double kLatency = kAlpha + 8 / kLink;
double beyond_latency(double bytes) { return (bytes - 8) / kLink; }

// One package, one NUMA node, four cores, no L3: nothing counts as cached.
pr::MachineDescription toy_machine() {
  pr::MachineDescription d;
  d.topology = pr::describe(hreduce::Topology::synthetic("pack:1 numa:1 core:4 pu:1"));
  d.core_to_core.by_relation = {{pr::Relation::same_numa, 1, 2 * kOneWay}};
  // docs/machine.md counts fold 3n and copy 2n bytes per n of vector.
  d.memory.one_thread = {{{kThreadFold}}, {{2 * kThreadCopy}}, {{3 * kThreadFold}}};
  d.memory.node_threads = {{{kNodeFold}}, {{2 * kNodeCopy}}, {{3 * kNodeFold}}};
  d.fold = {{"sum", "double", 8, kFoldCached / 8, 3 * kFoldCached}};
  d.cross_process.vm_readv_fixed_seconds = 1e-6;
  d.cross_process.vm_readv_seconds_per_kib = 1024 / 5e9;
  pr::MpiPointToPoint mpi;
  mpi.inter_node = pr::MpiLink{1, kAlpha, kLink, {}, 0, {}};
  d.mpi = mpi;
  return d;
}

md::Prediction predict(const md::Layout& layout, const md::CallCase& call,
                       const md::ModelSettings& settings = {}) {
  static const md::MachinePrices prices(toy_machine());
  static const hreduce::Topology node = md::topology_of(prices.topology());
  return md::predict_hreduce(prices, node, layout, call, settings);
}

}  // namespace

TEST_CASE("a two-member tree: one hop, the flag's line and the fold", "[model]") {
  md::ModelSettings tree;
  tree.options.algorithm = hreduce::Algorithm::tree;
  const double m = 1024;
  const md::Prediction p = predict({1, 1, 2}, {"reduce", 1024, "double"}, tree);
  // The hop's fold streams like every other fold: nothing is cached on the
  // toy machine (no L3, no curve), so at one thread's memory rate.
  CHECK(p.seconds == Approx(kOneWay + m / kThreadFold));
  CHECK(p.levels[static_cast<int>(md::Level::inside_process)] == Approx(p.seconds));
  CHECK_THAT(p.decisions, Catch::Contains("tree over 2 members"));
}

TEST_CASE("a sliced reduce on four members shares the NUMA node's bandwidth", "[model]") {
  const double m = 4 << 20;
  const md::Prediction p = predict({1, 1, 4}, {"reduce", 4 << 20, "double"});
  // Arrival: each member publishes its own line, and each waiter reads the
  // three others' at once (up to four in flight): the latest line, then
  // one batch. Fold: each member folds its quarter of the four inputs,
  // three folds of m/4 (the last one writing the result), four members at
  // once, so each gets a quarter of the node (2 GB/s < its own 4 GB/s).
  // Done: only the root waits, reading the three done lines in one batch.
  const double expected = 2 * kOneWay + (3 * m / 4) / (kNodeFold / 4) + kOneWay;
  CHECK(p.seconds == Approx(expected));
  CHECK(p.levels[static_cast<int>(md::Level::waiting)] == Approx(3 * kOneWay));
  CHECK_THAT(p.dominant, Catch::Contains("memory bandwidth of NUMA node 0"));
  CHECK_THAT(p.decisions, Catch::Contains("sliced"));
}

TEST_CASE("a ring allreduce: 2(Q-1) messages of m/Q and Q-1 folds", "[model]") {
  const md::MachinePrices prices(toy_machine());
  const long long Q = 4;
  const double m = 1 << 20;
  const auto steps = md::message_steps(md::MessageAlgorithm::ring, "allreduce", Q, m);
  const md::MessagePrice price = md::price_steps(steps, 1, prices, kFoldCached);
  CHECK(price.latency == Approx(2 * (Q - 1) * kLatency));
  CHECK(price.transfer == Approx(2 * (Q - 1) * beyond_latency(m / Q)));
  CHECK(price.fold == Approx((Q - 1) * (m / Q) / kFoldCached));
  CHECK(price.dominant == "message transfer");
}

TEST_CASE("recursive doubling on 6: a fold in, two exchanges, an unfold", "[model]") {
  const auto steps =
      md::message_steps(md::MessageAlgorithm::recursive_doubling, "allreduce", 6, 64);
  REQUIRE(steps.size() == 4);
  CHECK(steps[1].distance == 1);
  CHECK(steps[2].distance == 2);
  CHECK(steps[1].xor_partner);
  CHECK(md::message_steps(md::MessageAlgorithm::rabenseifner, "scan", 8, 64).empty());
}

TEST_CASE("steps both ways cost the probe's exchange; one-way steps its latency", "[model]") {
  pr::MachineDescription d = toy_machine();
  constexpr double kExchange = 3.5e-6;  // more than kLatency: each side handles two messages
  d.mpi->inter_node->exchange_seconds = kExchange;
  const md::MachinePrices prices(d);
  CHECK(prices.exchange_seconds(true) == kExchange);
  CHECK(prices.exchange_seconds(false) == 0);  // no link within a node: not measured
  // Recursive doubling on 6: a fold in and an unfold one way, two exchanges.
  const auto doubling =
      md::message_steps(md::MessageAlgorithm::recursive_doubling, "allreduce", 6, 64);
  CHECK(md::price_steps(doubling, 1, prices, kFoldCached).latency ==
        Approx(2 * kLatency + 2 * kExchange));
  // A ring: 2(Q-1) steps, each both ways.
  const auto ring = md::message_steps(md::MessageAlgorithm::ring, "allreduce", 4, 1 << 20);
  CHECK(md::price_steps(ring, 1, prices, kFoldCached).latency == Approx(6 * kExchange));
  // A binomial tree sends one way per step: the latency, as before.
  const auto tree = md::message_steps(md::MessageAlgorithm::binomial, "reduce", 8, 64);
  CHECK(md::price_steps(tree, 1, prices, kFoldCached).latency == Approx(3 * kLatency));
}

TEST_CASE("steps both ways grow by the probe's exchange curve where it has one", "[model]") {
  pr::MachineDescription d = toy_machine();
  // Exchanges cost more than one way and grow faster with size: both copies
  // share one memory.
  d.mpi->inter_node->exchange_seconds = 3e-6;
  d.mpi->inter_node->exchange_by_size = {{8, 3e-6}, {1 << 20, 503e-6}};
  const md::MachinePrices prices(d);
  CHECK(prices.exchange_by_size_seconds(8, true) == Approx(3e-6));
  CHECK(prices.exchange_by_size_seconds((1 << 19) + 4, true) == Approx(253e-6));
  // Past the last size, its last step's cost per byte goes on.
  CHECK(prices.exchange_by_size_seconds((2 << 20) - 8, true) == Approx(1003e-6));
  CHECK(prices.exchange_by_size_seconds(64, false) == 0);  // within a node: not measured
  // A ring on 4 with 4 MiB: 6 exchanges of 1 MiB, each 503 us, 3 of it latency.
  const auto ring = md::message_steps(md::MessageAlgorithm::ring, "allreduce", 4, 4 << 20);
  const md::MessagePrice p = md::price_steps(ring, 1, prices, kFoldCached);
  CHECK(p.latency == Approx(6 * 3e-6));
  CHECK(p.transfer == Approx(6 * 500e-6));
  // One-way steps keep the one-way curve.
  const auto tree = md::message_steps(md::MessageAlgorithm::binomial, "reduce", 2, 1 << 20);
  CHECK(md::price_steps(tree, 1, prices, kFoldCached).transfer == Approx(beyond_latency(1 << 20)));
}

TEST_CASE("on a node, links are shared by the ranks whose partner is elsewhere", "[model]") {
  const md::MachinePrices prices(toy_machine());
  const double m = 1 << 20;
  // Distance 4 with 4 ranks per node: all four cross; distance 1 on a ring: one.
  const md::MessageStep far{m, 0, 4, true, 1, false};
  CHECK(md::price_steps({far}, 4, prices, 1e30).transfer == Approx(4 * beyond_latency(m)));
  const md::MessageStep ring{m, 0, 1, false, 1, false};
  // The three others copy in and out of the node's memory (2 × 3 streams).
  const double in_memory = std::max((m - 8) / prices.mpi_intra_rate(), m * 2 * 3 / kNodeCopy);
  CHECK(md::price_steps({ring}, 4, prices, 1e30).transfer ==
        Approx(std::max(beyond_latency(m), in_memory)));
}

TEST_CASE("the node level's way is the runtime's node_way", "[model]") {
  CHECK_THAT(predict({1, 2, 1}, {"allreduce", 8, "double"}).decisions,
             Catch::Contains("node level: inline"));
  CHECK_THAT(predict({1, 2, 1}, {"allreduce", 1 << 20, "double"}).decisions,
             Catch::Contains("node level: single copy"));
  md::ModelSettings no_single_copy;
  no_single_copy.single_copy = false;
  CHECK_THAT(predict({1, 2, 1}, {"allreduce", 1 << 20, "double"}, no_single_copy).decisions,
             Catch::Contains("node level: chunks"));
}

TEST_CASE("two processes' node level takes the way their measure settles on", "[model]") {
  // Above 8 KiB two processes keep the way the call's size gives until the
  // other costs a quarter less (to the single copy) or a tenth less (back
  // to the inline way or the chunks): the oracle is each way priced alone,
  // over machines whose process_vm_readv runs from 50 GB/s to 50 MB/s.
  using hreduce::detail::NodeWay;
  int kept_within_margin = 0, switched = 0, kept = 0;
  for (const double per_kib : {2e-8, 1e-7, 2e-7, 3e-7, 4e-7, 1e-6, 2e-5}) {
    pr::MachineDescription machine = toy_machine();
    machine.cross_process.vm_readv_seconds_per_kib = per_kib;
    const md::MachinePrices prices(machine);
    const hreduce::Topology node = md::topology_of(prices.topology());
    // 64 KiB: a reduce's inline size (up to 128 KiB); an allreduce's
    // single copy (above 16 KiB).
    for (const char* collective :
         {"reduce", "scan", "exscan", "allreduce", "reduce_scatter_block"}) {
      for (const std::size_t bytes : {std::size_t{64} << 10, std::size_t{1} << 20}) {
        INFO(collective << " " << bytes << " B, " << per_kib << " s/KiB");
        const md::CallCase call{collective, bytes, "double"};
        const bool inline_by_size =
            bytes <= hreduce::detail::node_inline_bytes(
                         2, hreduce::detail::kind_of(*hreduce::parse_collective(collective)));
        md::ModelSettings by_size, other;
        by_size.measured_node_way =
            inline_by_size ? NodeWay::inline_announcement : NodeWay::single_copy;
        other.measured_node_way = inline_by_size ? NodeWay::single_copy : NodeWay::chunks;
        const double by_size_s =
            md::predict_hreduce(prices, node, {1, 2, 1}, call, by_size).seconds;
        const double other_s = md::predict_hreduce(prices, node, {1, 2, 1}, call, other).seconds;
        const double margin = by_size.measured_node_way == NodeWay::single_copy ? 0.9 : 0.75;
        const bool switches = other_s < margin * by_size_s;
        const md::Prediction p = md::predict_hreduce(prices, node, {1, 2, 1}, call, {});
        const NodeWay expected = *(switches ? other : by_size).measured_node_way;
        CHECK_THAT(p.decisions, Catch::Contains("node level: " + std::string(to_string(expected)) +
                                                " (by measure)"));
        CHECK(p.seconds == Approx(switches ? other_s : by_size_s));
        CHECK(p.measured_from == by_size.measured_node_way);
        // --explain prices both ways alone, beside the runtime's way.
        int alone = 0;
        for (const md::Candidate& c :
             md::explain_candidates(prices, node, {1, 2, 1}, call, md::ModelSettings{})) {
          for (const md::ModelSettings* way : {&by_size, &other}) {
            if (c.what != std::string(to_string(*way->measured_node_way)) + " alone") continue;
            ++alone;
            CHECK_FALSE(c.chosen);
            CHECK(c.seconds == Approx(way == &by_size ? by_size_s : other_s));
          }
        }
        CHECK(alone == 2);
        switched += switches;
        kept += !switches;
        kept_within_margin += !switches && other_s < by_size_s;
      }
    }
  }
  // Every side of the rule was taken: a switch, a keep, and a keep where
  // the other way was cheaper, though not by the margin.
  CHECK(switched > 0);
  CHECK(kept > 0);
  CHECK(kept_within_margin > 0);
  // Where the measure does not reach: 8 KiB and less, three processes, the
  // single copy off.
  md::ModelSettings off;
  off.single_copy = false;
  const struct {
    md::Layout layout;
    std::size_t bytes;
    md::ModelSettings settings;
    const char* way;
  } unmeasured[] = {{{1, 2, 1}, 8 << 10, {}, "node level: inline over"},
                    {{1, 3, 1}, 1 << 20, {}, "node level: chunks over"},
                    {{1, 2, 1}, 64 << 10, off, "node level: inline over"}};
  for (const auto& u : unmeasured) {
    const md::Prediction p = predict(u.layout, {"reduce", u.bytes, "double"}, u.settings);
    CHECK_THAT(p.decisions, Catch::Contains(u.way));
    CHECK_FALSE(p.measured_from);
  }
}

TEST_CASE("with the race, the node level takes the way priced faster at the race's size",
          "[model]") {
  // HREDUCE_NODE_SINGLE_COPY=auto: the runtime keeps, per kind, the way
  // that ran faster at kNodeRaceBytes; the model replays that race with
  // its prices. The oracle: the two predictions at that size, made apart.
  // Where the single copy won, its calls go by measure (the test above);
  // where the chunks won, the chunks serve every long call.
  md::ModelSettings on, single_copy_alone, off, raced;
  single_copy_alone.measured_node_way = hreduce::detail::NodeWay::single_copy;
  off.single_copy = false;
  raced.single_copy_race = true;
  for (const char* collective : {"allreduce", "reduce", "scan", "exscan"}) {
    INFO(collective);
    const md::CallCase at_race{collective, hreduce::detail::kNodeRaceBytes, "double"};
    const bool single_faster = predict({1, 2, 1}, at_race, single_copy_alone).seconds <=
                               predict({1, 2, 1}, at_race, off).seconds;
    CHECK_THAT(predict({1, 2, 1}, {collective, 1 << 20, "double"}, raced).decisions,
               Catch::Contains(single_faster ? "(by measure)" : "node level: chunks over"));
  }
  // A machine whose process_vm_readv crawls: the race goes to the chunks
  // for good; `on` skips the race, and its measure goes there too.
  pr::MachineDescription slow = toy_machine();
  slow.cross_process.vm_readv_seconds_per_kib = 1e-3;
  const md::MachinePrices prices(slow);
  const hreduce::Topology node = md::topology_of(prices.topology());
  const md::CallCase long_call{"allreduce", 1 << 20, "double"};
  CHECK_THAT(md::predict_hreduce(prices, node, {1, 2, 1}, long_call, raced).decisions,
             Catch::Contains("node level: chunks over"));
  CHECK_THAT(md::predict_hreduce(prices, node, {1, 2, 1}, long_call, on).decisions,
             Catch::Contains("node level: chunks (by measure)"));
  // --explain's node-level candidates: the runtime's way, off, the race
  // (two processes only), and the two ways the measure compares, each
  // alone (two processes, by measure).
  std::vector<std::string> whats;
  for (const md::Candidate& c : md::explain_candidates(prices, node, {1, 2, 1}, long_call, on)) {
    if (c.level == "node level") whats.push_back(c.what);
  }
  CHECK(whats == std::vector<std::string>{"the runtime's way", "single copy off",
                                          "single copy auto (raced)", "single copy alone",
                                          "chunks alone"});
  whats.clear();
  for (const md::Candidate& c : md::explain_candidates(prices, node, {1, 3, 1}, long_call, on)) {
    if (c.level == "node level") whats.push_back(c.what);
  }
  CHECK(whats == std::vector<std::string>{"the runtime's way", "single copy off"});
}

TEST_CASE("between nodes: the runtime's algorithm, priced step by step", "[model]") {
  const double m = 8;
  const md::Prediction p = predict({4, 1, 1}, {"allreduce", 8, "double"});
  CHECK_THAT(p.decisions, Catch::Contains("between processes: recursive_doubling over 4"));
  // Status round (two exchanges of the 304-byte status word), then two
  // exchanges of m bytes, each folded. (No L3 on the toy machine: the fold
  // streams at one thread's rate.) Before them, the lone member's engine
  // step copies its input into the leader's buffer.
  const double status = 2 * (kLatency + beyond_latency(304));
  const double expected = status + 2 * kLatency + 2 * m / kThreadFold;
  CHECK(p.levels[static_cast<int>(md::Level::between_nodes)] == Approx(expected));
  CHECK(p.levels[static_cast<int>(md::Level::inside_process)] == Approx(m / kThreadCopy));
  CHECK(p.seconds == Approx(expected + m / kThreadCopy));
}

TEST_CASE("layouts parse as NODESxPROCSxTHREADS", "[model][negative]") {
  const md::Layout l = md::parse_layout("1024x8x16");
  CHECK(l.nodes == 1024);
  CHECK(l.processes == 8);
  CHECK(l.threads == 16);
  CHECK(l.members() == 131072);
  for (const char* bad : {"", "8x16", "0x1x1", "1x1x1x1", "ax1x1", "1x1x"}) {
    CHECK_THROWS_AS(md::parse_layout(bad), hreduce::ArgumentError);
  }
}

TEST_CASE("built-in machines are complete descriptions", "[model]") {
  for (const char* name : {"2x64", "1x192"}) {
    const md::MachinePrices prices(md::builtin_machine(name));
    CHECK(prices.topology().pus.size() == (std::string(name) == "2x64" ? 128u : 192u));
    CHECK(prices.one_way_seconds(pr::Relation::same_l3) > 0);
    CHECK(prices.mpi_inter_rate() > 0);
  }
  CHECK(md::MachinePrices(md::builtin_machine("2x64")).numa_nodes() == 8);
  CHECK_THROWS_WITH(md::builtin_machine("3x7"), Catch::Contains("2x64"));
}

TEST_CASE("sixteen members meet on their own lines, four reads in flight", "[model]") {
  // An 8 B scan of 16 threads goes sliced: every waiter reads the 15 other
  // arrival lines four at a time (ceil(15 / 4) = 4 batches) after the
  // latest one, and the same for the done lines: ten transfers, where one
  // line taken in turn by all 16 members cost 32.
  const md::Prediction wide = [] {
    pr::MachineDescription d = toy_machine();
    d.topology = pr::describe(hreduce::Topology::synthetic("pack:1 numa:1 core:16 pu:1"));
    const md::MachinePrices prices(d);
    return md::predict_hreduce(prices, md::topology_of(prices.topology()), {1, 1, 16},
                               {"scan", 8, "double"}, {});
  }();
  CHECK_THAT(wide.decisions, Catch::Contains("sliced"));
  CHECK(wide.levels[static_cast<int>(md::Level::waiting)] == Approx(10 * kOneWay));
  // Sixteen processes' announcements likewise: an 8 B allreduce goes
  // inline, every process reading the 15 others' after the latest one.
  pr::MachineDescription d = toy_machine();
  d.topology = pr::describe(hreduce::Topology::synthetic("pack:1 numa:1 core:16 pu:1"));
  const md::MachinePrices prices(d);
  const md::Prediction processes = md::predict_hreduce(prices, md::topology_of(prices.topology()),
                                                       {1, 16, 1}, {"allreduce", 8, "double"}, {});
  CHECK_THAT(processes.decisions, Catch::Contains("inline"));
  CHECK(processes.levels[static_cast<int>(md::Level::waiting)] == Approx(5 * kOneWay));
}

TEST_CASE("a team of threads by mailbox meets on its own lines, as processes inline do",
          "[model]") {
  // Four threads, 8 B allreduce: the mailbox. Each member's announcement
  // is its own line: the latest one, then the other three in one batch
  // (two transfers), where one line taken in turn by all four cost four.
  const md::Prediction four = predict({1, 1, 4}, {"allreduce", 8, "double"});
  CHECK_THAT(four.decisions, Catch::Contains("mailbox"));
  CHECK(four.levels[static_cast<int>(md::Level::waiting)] == Approx(2 * kOneWay));
  // Sixteen threads, with tree_min_members above them: the mailbox waits
  // as sixteen processes' inline announcements do (five transfers), and
  // --explain offers it beside the tree and the sliced path.
  pr::MachineDescription d = toy_machine();
  d.topology = pr::describe(hreduce::Topology::synthetic("pack:1 numa:1 core:16 pu:1"));
  const md::MachinePrices prices(d);
  const hreduce::Topology node = md::topology_of(prices.topology());
  md::ModelSettings open_mailbox;
  open_mailbox.options.tree_min_members = 17;
  const md::Prediction sixteen =
      md::predict_hreduce(prices, node, {1, 1, 16}, {"allreduce", 8, "double"}, open_mailbox);
  CHECK_THAT(sixteen.decisions, Catch::Contains("mailbox"));
  CHECK(sixteen.levels[static_cast<int>(md::Level::waiting)] == Approx(5 * kOneWay));
  int offered = 0;
  for (const md::Candidate& c :
       md::explain_candidates(prices, node, {1, 1, 16}, {"allreduce", 8, "double"}, {})) {
    if (c.what != "mailbox") continue;
    ++offered;
    CHECK_FALSE(c.chosen);
    CHECK(c.seconds == Approx(sixteen.seconds));
  }
  CHECK(offered == 1);
  // Not where the mailbox could not take the call (1 KiB per member).
  for (const md::Candidate& c :
       md::explain_candidates(prices, node, {1, 1, 16}, {"allreduce", 1024, "double"}, {})) {
    CHECK(c.what != "mailbox");
  }
}

TEST_CASE("a reduce's or a scan's announcements cost one line transfer fewer", "[model]") {
  // Two members, 8 bytes: the mailbox. allreduce: both wait on both (two
  // transfers on the line); reduce and scans: only the later waits (one).
  const double allreduce = predict({1, 1, 2}, {"allreduce", 8, "double"}).seconds;
  for (const char* c : {"reduce", "scan", "exscan"}) {
    INFO(c);
    const md::Prediction p = predict({1, 1, 2}, {c, 8, "double"});
    CHECK(p.levels[static_cast<int>(md::Level::waiting)] == Approx(kOneWay));
    CHECK(allreduce - p.seconds == Approx(kOneWay).epsilon(0.05));
  }
}

TEST_CASE("the probe's by-size curves: cache rates and message times", "[model]") {
  pr::MachineDescription d = toy_machine();
  // Counted bytes as the probe counts them: copy 2n, fold 3n.
  d.memory.one_thread_by_size = {{4 << 10, 2 * 40e9, 3 * 60e9}, {4 << 20, 2 * 10e9, 3 * 20e9}};
  d.mpi->inter_node->by_size = {{8, 1e-6}, {4096, 3e-6}, {1 << 20, 101e-6}};
  const md::MachinePrices prices(d);
  CHECK(prices.cached_rate(md::Stream::copy, 4 << 10) == Approx(40e9));
  CHECK(prices.cached_rate(md::Stream::fold, 1024) == Approx(60e9));  // below: the smallest
  // Halfway in log size between 4 KiB and 4 MiB (128 KiB): halfway in rate.
  CHECK(prices.cached_rate(md::Stream::copy, 128 << 10) == Approx(25e9));
  CHECK(prices.cached_rate(md::Stream::copy, 8 << 20) == 0);  // beyond: memory prices it
  // Within the last-level cache but past the curve: the curve's last rate.
  CHECK(prices.cached_rate_within_curve(md::Stream::copy, 8 << 20) == Approx(10e9));
  CHECK(prices.cached_rate_within_curve(md::Stream::copy, 128 << 10) == Approx(25e9));
  CHECK(md::MachinePrices(toy_machine()).cached_rate_within_curve(md::Stream::copy, 4096) == 0);
  // Messages: linear between sizes; past the last, the last step's per-byte cost.
  CHECK(prices.message_seconds(8, true) == Approx(1e-6));
  CHECK(prices.message_seconds(2052, true) == Approx(2e-6));
  const double per_byte = 98e-6 / ((1 << 20) - 4096);
  CHECK(prices.message_seconds(2 << 20, true) == Approx(101e-6 + (1 << 20) * per_byte));
  // No intra-node curve: latency plus bytes over the rate.
  CHECK(prices.message_seconds(1000, false) ==
        Approx(prices.mpi_intra_latency() + 1000 / prices.mpi_intra_rate()));
}

TEST_CASE("a fold the last-level cache holds past the curve streams at the curve's last rate",
          "[model]") {
  // Two members, 8 MiB each: 24 MiB of inputs and output, in a 64 MiB L3
  // but past the curve's 4 MiB. Each member folds its half of the two
  // inputs (one fold of 4 MiB) at the curve's 4 MiB rate, 2 GB/s, not at
  // the cache-resident kernel's 10 GB/s (16 threads of a 16-core machine
  // folded so, 2.2 ms where 0.35 ms was predicted).
  pr::MachineDescription d = toy_machine();
  d.topology.l3_bytes = 64 << 20;
  d.topology.l3_caches = 1;
  d.memory.one_thread_by_size = {{4 << 10, 2 * 8e9, 3 * 9e9}, {4 << 20, 2 * 1e9, 3 * 2e9}};
  const md::MachinePrices prices(d);
  const hreduce::Topology node = md::topology_of(prices.topology());
  const double m = 8 << 20;
  const md::Prediction p =
      md::predict_hreduce(prices, node, {1, 1, 2}, {"reduce", 8 << 20, "double"}, {});
  CHECK_THAT(p.decisions, Catch::Contains("sliced"));
  CHECK(p.levels[static_cast<int>(md::Level::inside_process)] == Approx((m / 2) / 2e9));
}

TEST_CASE("a two-member exscan copies instead of folding", "[model]") {
  // 4 MiB on the toy machine streams from memory. Member j's slice: the
  // lower member's input copied into the upper member's output.
  const double m = 4 << 20;
  const md::Prediction p = predict({1, 1, 2}, {"exscan", 4 << 20, "double"});
  CHECK_THAT(p.decisions, Catch::Contains("sliced"));
  // Each member copies its half, both at once sharing the node's copy rate.
  const double expected = 2 * kOneWay + (m / 2) / (kNodeCopy / 2) + 2 * kOneWay;
  CHECK(p.seconds == Approx(expected));
}

TEST_CASE("the node level's single copy takes the runtime's cut", "[model]") {
  // Two processes, 1 MiB of doubles, single copy (1 us per call + 5 GB/s on
  // the toy machine). An exscan: process 1 reads half of x_0 into its
  // prefix while process 0 writes the other half there, one call per 256
  // KiB chunk each, no fold; each queues on the memory it reaches (process
  // 0's, process 1's), so the two run side by side.
  const double m = 1 << 20;
  const md::Prediction exscan = predict({1, 2, 1}, {"exscan", 1 << 20, "double"});
  CHECK_THAT(exscan.decisions, Catch::Contains("single copy"));
  const double node = exscan.levels[static_cast<int>(md::Level::node_segment)];
  CHECK(node == Approx(2 * 1e-6 + (m / 2) / 5e9));
  // A reduce folds: process 1 reads, folds and writes back its 2/5 (less 4
  // KiB), all through process 0's memory, while process 0 reads and folds
  // the rest: longer than the exscan's halves.
  const md::Prediction reduce = predict({1, 2, 1}, {"reduce", 1 << 20, "double"});
  CHECK(reduce.levels[static_cast<int>(md::Level::node_segment)] > node);
}

TEST_CASE("the node's staged chunks are pulled from the cores that wrote them", "[model]") {
  // Four processes, 64 KiB each: one chunk. A folder reads the three
  // quarters of its slice that the other processes staged, then each
  // drains the three quarters of the result the others folded: twice 48
  // KiB at the probe's price for data between cores, on top of the same
  // call priced without that figure.
  pr::MachineDescription with = toy_machine();
  with.core_to_core.data_by_size = {{512, 0.2e-6}, {8192, 1.6e-6}};
  const md::MachinePrices prices(with), plain(toy_machine());
  const hreduce::Topology node = md::topology_of(prices.topology());
  const md::CallCase call{"allreduce", 64 << 10, "double"};
  const md::Prediction p = md::predict_hreduce(prices, node, {1, 4, 1}, call, {});
  const md::Prediction q = md::predict_hreduce(plain, node, {1, 4, 1}, call, {});
  CHECK_THAT(p.decisions, Catch::Contains("chunks"));
  const double pulled = prices.data_from_another_core_seconds(48 << 10);
  const auto at = static_cast<int>(md::Level::node_segment);
  CHECK(p.levels[at] - q.levels[at] == Approx(2 * pulled));
  // Zero copy stages nothing: nothing to pull.
  md::ModelSettings zero_copy;
  zero_copy.zero_copy = true;
  CHECK(md::predict_hreduce(prices, node, {1, 4, 1}, call, zero_copy).levels[at] ==
        Approx(md::predict_hreduce(plain, node, {1, 4, 1}, call, zero_copy).levels[at]));
}

TEST_CASE("announcements another core wrote cost the probe's data transfer", "[model]") {
  pr::MachineDescription d = toy_machine();
  d.core_to_core.data_by_size = {{512, 0.2e-6}, {8192, 1.6e-6}};
  const md::MachinePrices prices(d);
  CHECK(prices.data_from_another_core_seconds(256) == Approx(0.1e-6));  // from (0, 0)
  CHECK(prices.data_from_another_core_seconds(4352) == Approx(0.9e-6));
  // Past the last size, its slope goes on.
  CHECK(prices.data_from_another_core_seconds(16384) ==
        Approx(1.6e-6 + 8192 * (1.4e-6 / (8192 - 512))));
  const hreduce::Topology node = md::topology_of(prices.topology());
  const md::MachinePrices plain_prices(toy_machine());
  const hreduce::Topology plain_node = md::topology_of(plain_prices.topology());
  // Two processes inline at 512 B: each reads the other's announcement and
  // its writer waits for it (an allreduce): the whole trip; the root alone
  // reads, its writer waits for nothing (a reduce): half.
  for (const auto& [collective, readers] : {std::pair{"allreduce", 1.0}, {"reduce", 0.5}}) {
    INFO(collective);
    const md::CallCase call{collective, 512, "double"};
    const double with = md::predict_hreduce(prices, node, {1, 2, 1}, call, {}).seconds;
    const double without =
        md::predict_hreduce(plain_prices, plain_node, {1, 2, 1}, call, {}).seconds;
    CHECK(with - without == Approx(readers * 0.2e-6));
  }
}
