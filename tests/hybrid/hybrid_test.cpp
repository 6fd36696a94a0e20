// Teams spanning several processes (in-memory channel): every collective ×
// op family × size × in place, on uneven process layouts and node groupings,
// against the sequential oracle over team ranks; plus the faults.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "src/common/asymmetric_fence.hpp"
#include "src/hybrid/lone_member.hpp"
#include "tests/engine/families.hpp"
#include "tests/engine/harness.hpp"
#include "tests/support/error_class.hpp"
#include "world.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {"1 process", {2}, {}},
      {"2 processes x 1", {1, 1}, {}},
      {"3 uneven processes, one node", {1, 2, 3}, {0, 0, 0}},
      {"4 processes, 2 virtual nodes", {2, 1, 2, 2}, {0, 0, 1, 1}},
      {"5 uneven processes, nodes of 3 and 2", {3, 1, 2, 1, 3}, {0, 0, 0, 1, 1}},
      {"5 processes, a node each", {1, 2, 1, 1, 2}, {0, 1, 2, 3, 4}},
  };
  return all;
}

template <class Fam>
std::string check_world(World& world, const Fam& fam, Collective c, std::size_t n, bool in_place,
                        int root) {
  CollectiveCheck<Fam> check(fam, c, world.size(), n, in_place, root);
  world.run([&](Member& m) { check.run(m, CollectiveOptions{}); });
  return check.verify();
}

}  // namespace

detail::InterOptions pipelining(bool on, bool node_level = true) {
  detail::InterOptions inter;
  inter.node_shared_memory = node_level;
  if (on) {  // tiny chunks, so even short vectors run through the pipeline
    inter.pipeline_min_bytes = 8;
    inter.pipeline_chunk_bytes = 40;
  }
  return inter;
}

TEST_CASE("across_processes says what each call moves between processes", "[hybrid]") {
  const bool single = GENERATE(true, false);
  setenv("HREDUCE_NODE_SINGLE_COPY", single ? "on" : "off", 1);
  World pair({1, 1}, {}, pipelining(false, true));
  World three({1, 1, 1}, {}, pipelining(false, true));
  World two_nodes({1, 1, 1, 1}, {0, 0, 1, 1}, pipelining(false, true));
  World messages({1, 2, 1}, {}, pipelining(false, false));
  World pipelined({2, 1}, {}, pipelining(true, true));
  unsetenv("HREDUCE_NODE_SINGLE_COPY");
  INFO((single ? "single copy" : "HREDUCE_NODE_SINGLE_COPY=off"));
  // The kernel may refuse the single copy (explain says so): then chunks.
  const bool copies =
      pair.team(0).explain(Collective::allreduce, 1 << 20).find("process_vm_readv") !=
      std::string::npos;
  if (!single) CHECK_FALSE(copies);
  const std::string beyond_inline = copies ? "single copy (measured)" : "chunks";
  const Team& two = pair.team(0);
  // Two processes: 16 KiB inline (a reduce's, scan's or exscan's 128 KiB), then one copy; above
  // 8 KiB, where the single copy serves, by measure (the size's way until tried otherwise).
  const std::string measured = copies ? "inline (measured)" : "inline";
  CHECK(two.across_processes(Collective::allreduce, 8) == "inline");
  CHECK(two.across_processes(Collective::allreduce, 8192) == "inline");
  CHECK(two.across_processes(Collective::allreduce, 8196) == measured);
  CHECK(two.across_processes(Collective::allreduce, 16384) == measured);
  CHECK(two.across_processes(Collective::allreduce, 16392) == beyond_inline);
  CHECK(two.across_processes(Collective::exscan, 1 << 20) == beyond_inline);
  CHECK(two.across_processes(Collective::reduce, 131072) == measured);
  CHECK(two.across_processes(Collective::reduce, 131080) == beyond_inline);
  CHECK(two.across_processes(Collective::exscan, 131072) == measured);
  CHECK(two.across_processes(Collective::scan, 131080) == beyond_inline);
  // Three processes: 16 KiB over the two others, 8 KiB; no single copy.
  CHECK(three.team(2).across_processes(Collective::scan, 8192) == "inline");
  CHECK(three.team(2).across_processes(Collective::scan, 8256) == "chunks");
  // Two nodes: the node level, then the node leaders' messages.
  CHECK(two_nodes.team(3).across_processes(Collective::allreduce, 8) ==
        "inline + recursive_doubling over 2 nodes");
  CHECK(two_nodes.team(1).across_processes(Collective::reduce_scatter_block, 8) ==
        "inline + recursive_doubling over 2 nodes");
  CHECK(two_nodes.team(0).across_processes(Collective::scan, 1 << 20) ==
        "chunks + hypercube over 2 nodes");
  // No node level: messages between all processes.
  CHECK(messages.team(0).across_processes(Collective::reduce, 8) == "binomial over 3 processes");
  CHECK(messages.team(1).across_processes(Collective::reduce_scatter, 8) ==
        "pairwise over 3 processes");
  // A process with helpers overlaps a long allreduce's steps.
  CHECK(pipelined.team(0).across_processes(Collective::allreduce, 64) == "pipelined, inline");
  CHECK(pipelined.team(0).across_processes(Collective::reduce, 64) == "inline");
}

TEST_CASE("multi-process collectives match the sequential oracle", "[hybrid][conformance]") {
  const Layout& layout = layouts()[GENERATE(range(0, 6))];
  const bool pipelined = GENERATE(false, true);
  const bool node_level = GENERATE(true, false);
  World world(layout.threads, layout.node_of, pipelining(pipelined, node_level));
  INFO(layout.name << ", " << world.size() << " members" << (pipelined ? ", pipelined" : "")
                   << (node_level ? ", node level" : ", messages only"));
  for_each_family([&](const auto& fam) {
    const bool subset = fam.name.find("sum") != std::string::npos ||
                        fam.name.find("user") != std::string::npos ||
                        fam.name.find("loc") != std::string::npos;
    if (!subset) return;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      for (Collective c : all_collectives()) {
        for (bool in_place : {false, true}) {
          for (int root : {0, world.size() - 1}) {
            if (root != 0 && c != Collective::reduce) continue;
            const std::string problem = check_world(world, fam, c, n, in_place, root);
            if (!problem.empty()) {
              FAIL_CHECK(fam.name << " " << name_of(c) << " n=" << n
                                  << (in_place ? " in place" : "") << " root=" << root << ": "
                                  << problem);
            }
          }
        }
      }
    }
  });
}

TEST_CASE("long vectors on two processes of a node, with and without single copy",
          "[hybrid][conformance]") {
  // From 16 KiB per process two processes of one node reach each other's
  // memory directly (node_single_copy.cpp): with one member each and with
  // several (whose leaders then hold workspace buffers), next to a pair on
  // a second node, for every collective, in place or not, at both roots.
  const bool single = GENERATE(true, false);
  const Layout layout =
      GENERATE(Layout{"2 processes x 1", {1, 1}, {}}, Layout{"2 processes of 2 and 3", {2, 3}, {}},
               Layout{"2 nodes of 2 processes", {1, 2, 1, 1}, {0, 0, 1, 1}});
  setenv("HREDUCE_NODE_SINGLE_COPY", single ? "on" : "off", 1);
  World world(layout.threads, layout.node_of, pipelining(false, true));
  unsetenv("HREDUCE_NODE_SINGLE_COPY");
  INFO(layout.name << (single ? "" : ", HREDUCE_NODE_SINGLE_COPY=off"));
  CHECK((world.team(0).explain(Collective::exscan, 65536).find("process_vm_readv") !=
         std::string::npos) == single);
  for_each_family([&](const auto& fam) {
    const bool subset =
        fam.name.find("sum") != std::string::npos || fam.name.find("user") != std::string::npos;
    if (!subset) return;
    // 3000 elements: 12 KiB of int (the chunks), 24 KiB of double (one
    // copy); 40000: 160 KiB to 640 KiB, across the chunk.
    for (std::size_t n : {std::size_t{3000}, std::size_t{40000}}) {
      for (Collective c : all_collectives()) {
        for (bool in_place : {false, true}) {
          for (int root : {0, world.size() - 1}) {
            if (root != 0 && c != Collective::reduce) continue;
            const std::string problem = check_world(world, fam, c, n, in_place, root);
            if (!problem.empty()) {
              FAIL_CHECK(fam.name << " " << name_of(c) << " n=" << n
                                  << (in_place ? " in place" : "") << " root=" << root << ": "
                                  << problem);
            }
          }
        }
      }
    }
  });
}

TEST_CASE("each inter-process allreduce algorithm gives the same answer", "[hybrid]") {
  for (detail::InterAlgorithm algorithm :
       {detail::InterAlgorithm::recursive_doubling, detail::InterAlgorithm::rabenseifner,
        detail::InterAlgorithm::ring}) {
    for (bool by_node : {false, true}) {
      detail::InterOptions inter;
      inter.allreduce = algorithm;
      inter.by_node = by_node;
      World world({2, 1, 1, 2, 1}, {0, 0, 1, 1, 2}, inter);
      const auto sum = family<double>("double sum", op::sum, quarter);
      const auto affine = family<Affine>("affine", affine_op, [](int m, std::size_t i) {
        return Affine{static_cast<std::uint64_t>(small(m, i, 90)) * 2 + 1,
                      static_cast<std::uint64_t>(m)};
      });
      for (std::size_t n : {1, 100, 5000}) {
        INFO(to_string(algorithm) << (by_node ? " by node" : "") << " n=" << n);
        CHECK(check_world(world, sum, Collective::allreduce, n, false, 0).empty());
        CHECK(check_world(world, affine, Collective::allreduce, n, true, 0).empty());
      }
    }
  }
}

namespace {

template <class Fn>
std::vector<std::string> errors_in(World& world, Fn&& fn) {
  std::vector<std::string> messages(world.size());
  world.run([&](Member& m) {
    try {
      fn(m);
    } catch (const Error& e) {
      messages[m.rank()] = class_tag(e) + e.what();
    }
  });
  return messages;
}

void check_everyone(const std::vector<std::string>& messages,
                    const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < messages.size(); ++r) {
    INFO("member " << r << ": " << messages[r]);
    REQUIRE_FALSE(messages[r].empty());
    for (const auto& part : parts) CHECK_THAT(messages[r], Catch::Contains(part));
  }
}

void check_usable(World& world) {
  for (int k = 0; k < world.processes_count(); ++k) CHECK(world.team(k).usable());
  const auto sum =
      family<long>("long sum", op::sum, [](int m, std::size_t i) { return small(m, i, 100); });
  CHECK(check_world(world, sum, Collective::allreduce, 10, false, 0).empty());
  CHECK(check_world(world, sum, Collective::scan, 10, false, 0).empty());
}

const auto throwing_sum = make_op<int>([](int a, int b) {
  if (a == 13 || b == 13) throw std::runtime_error("boom: saw 13");
  return a + b;
});

}  // namespace

TEST_CASE("a user op that throws in one process fails the call everywhere", "[hybrid][negative]") {
  World world({2, 3, 1}, {0, 0, 1}, pipelining(GENERATE(false, true)));
  const int culprit = GENERATE(0, 2, 5);  // a leader, a non-leader, the last process
  for (auto collective : {Collective::allreduce, Collective::scan, Collective::reduce,
                          Collective::reduce_scatter_block, Collective::exscan}) {
    INFO(name_of(collective) << ", 13 on member " << culprit);
    auto messages = errors_in(world, [&](Member& m) {
      std::vector<int> in(6 * 4, 1), out(6 * 4, 0);
      if (m.rank() == culprit) in[2] = 13;
      switch (collective) {
        case Collective::allreduce: m.allreduce(in.data(), out.data(), 4, throwing_sum); break;
        case Collective::scan: m.scan(in.data(), out.data(), 4, throwing_sum); break;
        case Collective::exscan: m.exscan(in.data(), out.data(), 4, throwing_sum); break;
        case Collective::reduce: m.reduce(in.data(), out.data(), 4, throwing_sum, 3); break;
        default: m.reduce_scatter_block(in.data(), out.data(), 4, throwing_sum); break;
      }
    });
    if (collective == Collective::exscan && culprit == 5) {
      // The last member's input takes part in no exclusive prefix.
      for (const auto& e : messages) CHECK(e.empty());
      continue;
    }
    check_everyone(messages, {"[OpError] ", "boom: saw 13"});
    // Named as the collective the user called, never as an internal step
    // or with an internal call number.
    for (const auto& e : messages) {
      CHECK_THAT(e, Catch::StartsWith("[OpError] " + std::string(name_of(collective))) &&
                        !Catch::Contains("from_root") && !Catch::Contains("(call "));
    }
    check_usable(world);
  }
}

TEST_CASE("processes that disagree are reported everywhere", "[hybrid][negative]") {
  // Every error in the call that caused it: no process runs ahead (the
  // next test case is about those that do).
  detail::InterOptions inter = pipelining(GENERATE(false, true));
  inter.node_run_ahead = false;
  World world({1, 2, 2}, {}, inter);
  SECTION("count") {
    auto messages = errors_in(world, [](Member& m) {
      std::vector<double> x(8, 1), y(8);
      m.allreduce(x.data(), y.data(), m.rank() >= 3 ? 8 : 7, op::sum);
    });
    check_everyone(messages,
                   {"[ArgumentError] ", "processes disagree", "count 7", "count 8", "process 2"});
  }
  SECTION("collective") {
    auto messages = errors_in(world, [](Member& m) {
      double x = 1, y = 0;
      if (m.rank() == 0) {
        m.scan(&x, &y, 1, op::sum);
      } else {
        m.allreduce(&x, &y, 1, op::sum);
      }
    });
    check_everyone(messages, {"processes disagree", "scan", "allreduce"});
  }
  SECTION("root out of range") {
    auto messages = errors_in(world, [](Member& m) {
      double x = 1, y = 0;
      m.reduce(&x, &y, 1, op::sum, 5);
    });
    check_everyone(messages, {"[ArgumentError] ", "root 5 is outside 0..4"});
  }
  SECTION("a bad pointer in one process") {
    auto messages = errors_in(world, [](Member& m) {
      std::vector<double> x(4, 1), y(4);
      m.allreduce(m.rank() == 4 ? nullptr : x.data(), y.data(), 4, op::sum);
    });
    check_everyone(messages, {"process 2 failed", "in is a null pointer"});
  }
  SECTION("a bad pointer in a process of one member") {
    // Process 0 hands its buffers straight to the node level (no local
    // steps): the same checks, the same text everywhere.
    const bool scan = GENERATE(false, true);
    auto messages = errors_in(world, [&](Member& m) {
      std::vector<double> x(4, 1), y(4);
      double* out = m.rank() == 0 ? nullptr : y.data();
      if (scan) {
        m.scan(x.data(), out, 4, op::sum);
      } else {
        m.allreduce(x.data(), out, 4, op::sum);
      }
    });
    check_everyone(messages,
                   {"process 0 failed", scan ? "scan: member 0: out is a null pointer"
                                             : "allreduce: member 0: out is a null pointer"});
  }
  check_usable(world);
}

TEST_CASE("processes that disagree on the root are told the roots", "[hybrid][negative]") {
  // One node per process (the leaders compare) and one node of three.
  const bool one_node = GENERATE(false, true);
  detail::InterOptions inter;
  inter.node_run_ahead = false;
  World world({1, 2, 2}, one_node ? std::vector<int>{0, 0, 0} : std::vector<int>{0, 1, 2}, inter);
  auto messages = errors_in(world, [](Member& m) {
    std::vector<double> x(4, 1), y(4);
    m.reduce(x.data(), y.data(), 4, op::sum, m.rank() >= 3 ? 3 : 0);
  });
  check_everyone(messages, {"[ArgumentError] reduce", "processes disagree", "count 4, root 0",
                            "count 4, root 3", "process 2"});
  check_usable(world);
}

TEST_CASE("a process that ran ahead of a failed call learns it later; the team is unusable",
          "[hybrid][negative]") {
  // Three processes of one member on one node: in a small reduce onto
  // member 0, processes 1 and 2 only contribute and return at once.
  World world({1, 1, 1});
  const auto sum =
      family<long>("long sum", op::sum, [](int m, std::size_t i) { return small(m, i, 100); });
  CHECK(check_world(world, sum, Collective::reduce, 10, false, 0).empty());
  std::vector<std::string> messages(3);
  world.run([&](Member& m) {
    try {
      double x = 1, y = 0;
      m.reduce(&x, m.rank() == 0 ? nullptr : &y, 1, op::sum, 0);  // the root's out is null
      // Those that ran ahead find out within a few calls.
      for (int call = 0; call < 2 * detail::kNodeSlots; ++call) m.reduce(&x, &y, 1, op::sum, 0);
      messages[m.rank()] = "no error";
    } catch (const Error& e) {
      messages[m.rank()] = class_tag(e) + e.what();
    }
  });
  CHECK_THAT(messages[0], Catch::StartsWith("[UnusableTeamError] ") && Catch::Contains("out") &&
                              Catch::Contains("had already returned") &&
                              Catch::Contains("no longer usable"));
  for (int r = 1; r < 3; ++r) {
    CHECK_THAT(messages[r], Catch::StartsWith("[UnusableTeamError] ") &&
                                Catch::Contains("no longer usable") && Catch::Contains("out"));
  }
  for (int k = 0; k < world.processes_count(); ++k) CHECK_FALSE(world.team(k).usable());
  // Unusable for good, and said so at once, on every member.
  auto after = errors_in(world, [](Member& m) { m.barrier(); });
  check_everyone(after, {"[UnusableTeamError] ", "no longer usable"});
  // The way back on one node: every process resynchronises, then every
  // collective agrees with the oracle again.
  world.each_process([](int, Team& team) { team.resynchronize(); });
  check_usable(world);
  CHECK(check_world(world, sum, Collective::reduce, 10, false, 0).empty());
}

TEST_CASE("a team spanning nodes refuses to resynchronise", "[hybrid][negative]") {
  World world({1, 1}, {0, 1});
  std::vector<std::string> messages(2);
  world.each_process([&](int k, Team& team) {
    try {
      team.resynchronize();
    } catch (const Error& e) {
      messages[k] = class_tag(e) + e.what();
    }
  });
  check_everyone(messages, {"[UnusableTeamError] ", "several nodes", "build a new team"});
  check_usable(world);
}

TEST_CASE("team ranks follow process order, then thread order", "[hybrid]") {
  World world({2, 1, 3});
  CHECK(world.size() == 6);
  std::vector<int> seen(6, -1);
  world.run([&](Member& m) {
    int r = m.rank(), gathered = 0;
    m.exscan(&r, &gathered, 1, op::bor);  // touches every lower rank
    seen[m.rank()] = m.size();
  });
  CHECK(seen == std::vector<int>(6, 6));
  CHECK(world.team(2).local_size() == 3);
  CHECK(world.team(2).member(0).rank() == 3);
  CHECK(world.team(1).member(0).rank() == 2);
  CHECK_THAT(world.team(0).explain(Collective::allreduce, 1 << 20), Catch::Contains("3 processes"));
}

TEST_CASE("buffers from Team::allocate are read and written where they are", "[hybrid][node]") {
  struct Shape {
    std::vector<int> threads, node_of;
  };
  // Processes alone and with several members, one node and two.
  const Shape shape = GENERATE(Shape{{1, 1}, {}}, Shape{{1, 1, 1}, {}}, Shape{{2, 1, 3}, {}},
                               Shape{{1, 1, 1, 1}, {0, 0, 1, 1}});
  detail::InterOptions inter;
  inter.node_chunk_bytes = 4096;  // many chunks
  World world(shape.threads, shape.node_of, inter);
  const int p = world.size();
  const std::size_t n = GENERATE(std::size_t{1}, std::size_t{100}, std::size_t{3000});
  const bool in_place = GENERATE(false, true);
  INFO(shape.threads.size() << " processes, " << p << " members, n = " << n
                            << (in_place ? ", in place" : ""));
  // One buffer per member, from its process's allocation.
  std::vector<std::span<long>> in(p), out(p);
  world.each_process([&](int, Team& team) {
    auto all_in = team.allocate<long>(n * team.local_size());
    auto all_out = team.allocate<long>(n * team.local_size());
    for (int i = 0; i < team.local_size(); ++i) {
      const int rank = team.member(i).rank();
      in[rank] = all_in.subspan(i * n, n);
      out[rank] = in_place ? in[rank] : all_out.subspan(i * n, n);
    }
  });
  auto value = [](int rank, std::size_t i) { return static_cast<long>(rank * 7919 + i * 31) - 50; };
  auto fill = [&] {
    for (int r = 0; r < p; ++r) {
      for (std::size_t i = 0; i < n; ++i) in[r][i] = value(r, i);
      if (!in_place) std::fill(out[r].begin(), out[r].end(), -1);
    }
  };
  // x_0 + … + x_{upto-1} at element i.
  auto total = [&](std::size_t i, int upto) {
    long sum = 0;
    for (int r = 0; r < upto; ++r) sum += value(r, i);
    return sum;
  };
  const std::size_t block = n / static_cast<std::size_t>(p);
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::reduce_scatter_block,
                       Collective::scan, Collective::exscan}) {
    if (c == Collective::reduce_scatter_block && block == 0) continue;
    fill();
    world.run([&](Member& m) {
      const int r = m.rank();
      const long* from = in_place ? out[r].data() : in[r].data();
      switch (c) {
        case Collective::allreduce: m.allreduce(from, out[r].data(), n, op::sum); break;
        case Collective::reduce: m.reduce(from, out[r].data(), n, op::sum, p - 1); break;
        case Collective::scan: m.scan(from, out[r].data(), n, op::sum); break;
        case Collective::exscan: m.exscan(from, out[r].data(), n, op::sum); break;
        default: m.reduce_scatter_block(from, out[r].data(), block, op::sum); break;
      }
    });
    for (int r = 0; r < p; ++r) {
      if ((c == Collective::reduce && r != p - 1) || (c == Collective::exscan && r == 0)) continue;
      const std::size_t count = c == Collective::reduce_scatter_block ? block : n;
      const int upto = c == Collective::scan ? r + 1 : c == Collective::exscan ? r : p;
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t element = c == Collective::reduce_scatter_block ? r * block + i : i;
        if (out[r][i] != total(element, upto)) {
          FAIL(name_of(c) << ": member " << r << " element " << i << " is " << out[r][i]
                          << ", expected " << total(element, upto));
        }
      }
    }
  }
}

TEST_CASE("explain shows the node's processes, their members and the segment's pages",
          "[hybrid][node]") {
  // Through the staging chunks: two processes' long calls would otherwise
  // take the single copy, which leaves the chunks untouched.
  setenv("HREDUCE_NODE_SINGLE_COPY", "off", 1);
  World world({1, 2}, {});
  unsetenv("HREDUCE_NODE_SINGLE_COPY");
  const std::string before = world.team(1).explain(Collective::allreduce, 1 << 20);
  INFO(before);
  CHECK(before.find("process 0 (pid ") != std::string::npos);
  CHECK(before.find("process 1 (pid ") != std::string::npos);
  CHECK(before.find("1 member(s) on PU 0") != std::string::npos);
  CHECK(before.find("2 member(s) on PU ") != std::string::npos);
  CHECK(before.find("no messages") != std::string::npos);
  // After a call that went through the staging chunks, their pages exist.
  std::vector<std::vector<double>> in(3, std::vector<double>(1 << 17, 1.0)), out = in;
  world.run(
      [&](Member& m) { m.allreduce(in[m.rank()].data(), out[m.rank()].data(), 1 << 17, op::sum); });
  CHECK(out[2][12345] == 3.0);
  const std::string after = world.team(0).explain(Collective::allreduce, 1 << 20);
  INFO(after);
  CHECK(after.find("staging pages: NUMA node") != std::string::npos);
  CHECK(after.find("result pages: NUMA node") != std::string::npos);
}

TEST_CASE("with and without the asymmetric fence, explain says which and results hold",
          "[hybrid][node]") {
  const bool fence = GENERATE(true, false);
  if (fence) {
    unsetenv("HREDUCE_NODE_ASYMMETRIC_FENCE");
  } else {
    setenv("HREDUCE_NODE_ASYMMETRIC_FENCE", "off", 1);
  }
  World world({1, 1, 2}, {});
  unsetenv("HREDUCE_NODE_ASYMMETRIC_FENCE");
  const bool light = fence && detail::register_asymmetric_fence();
  const std::string text = world.team(0).explain(Collective::allreduce, 64);
  INFO(text);
  CHECK((text.find("published without a fence") != std::string::npos) == light);
  CHECK((text.find("published with a fence") != std::string::npos) == !light);
  const auto sum = family<long>(
      "long sum", op::sum, [](int m, std::size_t i) { return static_cast<long>(m * 1000 + i); });
  for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{5000}}) {
    for (Collective c : all_collectives()) {
      const std::string problem = check_world(world, sum, c, n, false, world.size() - 1);
      if (!problem.empty()) FAIL_CHECK(name_of(c) << " n=" << n << ": " << problem);
    }
  }
}

TEST_CASE("process 0 of an exscan may pass no output", "[hybrid][node]") {
  const bool node_level = GENERATE(true, false);
  detail::InterOptions inter;
  inter.node_shared_memory = node_level;
  World world({1, 1, 1}, {}, inter);
  std::vector<double> got(3, -1.0);
  world.run([&](Member& m) {
    const double x = 1.5 + m.rank();
    m.exscan(&x, m.rank() == 0 ? nullptr : &got[m.rank()], 1, op::sum);
  });
  CHECK(got[0] == -1.0);
  CHECK(got[1] == 1.5);
  CHECK(got[2] == 1.5 + 2.5);
}

namespace {

// x_k[i] of process k in the lone-member tests: distinct, exact in a long.
long lone_input(int k, std::size_t i) { return (k + 1) * 1000 + static_cast<long>(i) * 7; }

}  // namespace

TEST_CASE("the lone-member path agrees with the general path and the oracle", "[hybrid][node]") {
  // The MPI drop-in sends small calls of processes of one member through
  // LoneMemberPath straight to the node level; in one call some processes
  // may take it and others the general path (a call it refuses), so both
  // must run the same node operation.
  const int P = GENERATE(2, 3);
  World world(std::vector<int>(static_cast<std::size_t>(P), 1));
  const auto sum = op::sum;
  const detail::ErasedOp erased = detail::erase_op<long>(sum);
  const std::vector<detail::CollectiveKind> kinds = {
      detail::CollectiveKind::allreduce, detail::CollectiveKind::reduce,
      detail::CollectiveKind::scan, detail::CollectiveKind::exscan};
  // An announcement holds 16 KiB over the other processes, within 512 B
  // and 16 KiB, in whole lines: 2048 longs for 2 processes, 1024 for 3.
  // An allreduce one element longer is refused; the others go on, up to
  // the single copy (2 processes) or the chunks (3).
  const std::size_t fill = P == 2 ? 2048 : 1024;
  const std::vector<std::size_t> counts = {0, 1, 5, 64, fill, fill + 1, 40000};
  std::vector<std::string> failures(static_cast<std::size_t>(P));
  std::vector<int> served(static_cast<std::size_t>(P), 0), refused(served), served_long(served);
  world.run([&](Member& m) {
    const int k = m.rank();
    auto lone = detail::LoneMemberPath::of(m);
    if (!lone) {
      failures[k] = "no lone-member path";
      return;
    }
    int call = 0;
    for (const auto kind : kinds) {
      for (const std::size_t n : counts) {
        for (int root = 0; root < (kind == detail::CollectiveKind::reduce ? P : 1); ++root) {
          ++call;
          std::vector<long> in(n), out(n, -1);
          for (std::size_t i = 0; i < n; ++i) in[i] = lone_input(k, i);
          // Processes alternate between the two paths, differently per call.
          bool done = false;
          if ((call + k) % 2 == 0) {
            done = lone->run(kind, in.data(), out.data(), n, root, erased);
            ++(done ? served : refused)[k];
            if (done && n > fill) ++served_long[k];
          }
          if (!done) {
            switch (kind) {
              case detail::CollectiveKind::allreduce:
                m.allreduce(in.data(), out.data(), n, sum);
                break;
              case detail::CollectiveKind::reduce:
                m.reduce(in.data(), out.data(), n, sum, root);
                break;
              case detail::CollectiveKind::scan: m.scan(in.data(), out.data(), n, sum); break;
              default: m.exscan(in.data(), out.data(), n, sum); break;
            }
          }
          // The oracle: a plain loop over the processes' inputs.
          const bool receives = kind == detail::CollectiveKind::reduce   ? k == root
                                : kind == detail::CollectiveKind::exscan ? k > 0
                                                                         : true;
          const int upto = kind == detail::CollectiveKind::scan     ? k + 1
                           : kind == detail::CollectiveKind::exscan ? k
                                                                    : P;
          for (std::size_t i = 0; i < n && failures[k].empty(); ++i) {
            long expected = -1;
            if (receives) {
              expected = 0;
              for (int q = 0; q < upto; ++q) expected += lone_input(q, i);
            }
            if (out[i] != expected) {
              failures[k] = std::string(detail::to_string(kind)) + " of " + std::to_string(n) +
                            ", root " + std::to_string(root) + ": element " + std::to_string(i) +
                            " is " + std::to_string(out[i]) + ", not " + std::to_string(expected);
            }
          }
        }
      }
    }
  });
  for (int k = 0; k < P; ++k) {
    INFO("process " << k);
    CHECK(failures[k] == "");
    CHECK(served[k] > 0);
    CHECK(refused[k] > 0);      // the allreduces one element over
    CHECK(served_long[k] > 0);  // the others over the announcement
  }
  SECTION("processes that disagree learn it on either path") {
    bool lean_refused = false;
    auto messages = errors_in(world, [&](Member& m) {
      long x[4] = {1, 2, 3, 4}, y[4] = {};
      // Process 0 the lean way with 4 elements, the others the general
      // way with 3.
      bool general = m.rank() != 0;
      if (!general) {
        general = !detail::LoneMemberPath::of(m)->run(detail::CollectiveKind::allreduce, x, y, 4, 0,
                                                      erased);
        lean_refused = general;
      }
      if (general) m.allreduce(x, y, m.rank() == 0 ? 4 : 3, sum);
    });
    CHECK_FALSE(lean_refused);
    check_everyone(messages, {"[ArgumentError] ", "processes disagree", "count 3", "count 4"});
  }
  SECTION("arguments the general path words are refused") {
    std::vector<int> refusals(static_cast<std::size_t>(P), 0);
    world.run([&](Member& m) {
      auto lone = detail::LoneMemberPath::of(m);
      long x = 1, y = 0;
      const auto user = make_op<long>([](long a, long b) { return a + b; });
      const bool said_no[] = {
          !lone->run(detail::CollectiveKind::reduce, &x, &y, 1, P, erased),  // root
          !lone->run(detail::CollectiveKind::allreduce, nullptr, &y, 1, 0, erased),
          !lone->run(detail::CollectiveKind::scan, &x, nullptr, 1, 0, erased),
          !lone->run(detail::CollectiveKind::reduce_scatter, &x, &y, P, 0, erased),  // no counts
          // A user op may throw: the general path's status round.
          !lone->run(detail::CollectiveKind::allreduce, &x, &y, 1, 0, detail::erase_op<long>(user)),
      };
      for (bool no : said_no) refusals[m.rank()] += no;
    });
    for (int k = 0; k < P; ++k) CHECK(refusals[k] == 5);
  }
  check_usable(world);
}

TEST_CASE("the lone-member path's reduce_scatter agrees with the general path and the oracle",
          "[hybrid][node]") {
  // The drop-in's reduce_scatter(_block) of the node's inline size: one
  // node reduction of the whole vector, each process receiving its block.
  // Processes alternate between it and the general path within one call,
  // with uneven counts, an empty block, and in place.
  const int P = GENERATE(2, 3);
  World world(std::vector<int>(static_cast<std::size_t>(P), 1));
  const detail::ErasedOp erased = detail::erase_op<long>(op::sum);
  std::vector<std::string> failures(static_cast<std::size_t>(P));
  std::vector<int> served(static_cast<std::size_t>(P), 0);
  world.run([&](Member& m) {
    const int k = m.rank();
    auto lone = detail::LoneMemberPath::of(m);
    int call = 0;
    for (const bool blocks : {true, false}) {
      for (const std::size_t per : {0, 1, 7, 100}) {
        for (const bool in_place : {false, true}) {
          ++call;
          std::vector<std::size_t> counts(static_cast<std::size_t>(P));
          std::size_t whole = 0, lo = 0;
          for (int q = 0; q < P; ++q) {
            counts[q] = blocks ? per : (q == 1 ? 0 : per + static_cast<std::size_t>(q));
            if (q == k) lo = whole;
            whole += counts[q];
          }
          std::vector<long> in(whole), out(whole + 1, -1);
          for (std::size_t i = 0; i < whole; ++i) in[i] = lone_input(k, i);
          if (in_place) std::copy(in.begin(), in.end(), out.begin());
          const long* from = in_place ? out.data() : in.data();
          bool done = false;
          if ((call + k) % 2 == 0) {
            done = blocks ? lone->run(detail::CollectiveKind::reduce_scatter_block, from,
                                      out.data(), per, 0, erased)
                          : lone->run(detail::CollectiveKind::reduce_scatter, from, out.data(),
                                      counts.size(), 0, erased, counts.data());
            served[k] += done;
          }
          if (!done && blocks) m.reduce_scatter_block(from, out.data(), per, op::sum);
          if (!done && !blocks) m.reduce_scatter(from, out.data(), counts, op::sum);
          for (std::size_t i = 0; i < counts[k] && failures[k].empty(); ++i) {
            long expected = 0;
            for (int q = 0; q < P; ++q) expected += lone_input(q, lo + i);
            if (out[i] != expected) {
              failures[k] = std::string(blocks ? "reduce_scatter_block" : "reduce_scatter") +
                            ", per " + std::to_string(per) + (in_place ? ", in place" : "") +
                            ": element " + std::to_string(i) + " is " + std::to_string(out[i]) +
                            ", not " + std::to_string(expected);
            }
          }
        }
      }
    }
  });
  for (int k = 0; k < P; ++k) {
    INFO("process " << k);
    CHECK(failures[k] == "");
    CHECK(served[k] > 0);
  }
  check_usable(world);
}

TEST_CASE("the lone-member path is only for one member per process on one node", "[hybrid][node]") {
  auto offered = [](World& world) {
    int count = 0;
    std::mutex mutex;
    world.each_process([&](int, Team& team) {
      const bool got = detail::LoneMemberPath::of(team.member(0)) != nullptr;
      std::lock_guard lock(mutex);
      count += got;
    });
    return count;
  };
  SECTION("one member each, one node") {
    World world({1, 1});
    CHECK(offered(world) == 2);
  }
  SECTION("two members in the other process") {
    World world({1, 2});
    CHECK(offered(world) == 1);  // the lone member's own process still may
  }
  SECTION("two nodes") {
    World world({1, 1}, {0, 1});
    CHECK(offered(world) == 0);
  }
  SECTION("no node level") {
    detail::InterOptions inter;
    inter.node_shared_memory = false;
    World world({1, 1}, {}, inter);
    CHECK(offered(world) == 0);
  }
}
