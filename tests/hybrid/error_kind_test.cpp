// Failures across processes carry their kind (hreduce::ErrorKind), which
// the MPI drop-in maps to an MPI error class: every member of every process
// sees the same kind, whichever regime found the failure (the leaders over
// messages, the node level, both; lone members on one node).
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "world.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

struct Where {
  const char* name;
  std::vector<int> threads;
  std::vector<int> node_of;
  bool node_level;
};

const Where kWheres[] = {
    {"messages only", {1, 2, 2}, {0, 0, 0}, false},     {"one node", {1, 2, 2}, {0, 0, 0}, true},
    {"lone members on one node", {1, 1}, {0, 0}, true}, {"a node each", {1, 2, 2}, {0, 1, 2}, true},
    {"two nodes", {1, 2, 2}, {0, 0, 1}, true},
};

// The kind every member threw (or 0 where it threw nothing).
template <class Fn>
std::vector<char> kinds_in(World& world, Fn&& fn) {
  std::vector<char> kinds(world.size(), 0);
  world.run([&](Member& m) {
    try {
      fn(m);
    } catch (const Error& e) {
      kinds[m.rank()] = static_cast<char>(e.kind());
    }
  });
  return kinds;
}

void check_everyone(const std::vector<char>& kinds, ErrorKind expected) {
  for (std::size_t r = 0; r < kinds.size(); ++r) {
    INFO("member " << r);
    CHECK(kinds[r] == static_cast<char>(expected));
  }
}

}  // namespace

TEST_CASE("failures across processes carry their kind to every member", "[hybrid][negative]") {
  for (const Where& where : kWheres) {
    INFO(where.name);
    detail::InterOptions inter;
    inter.node_shared_memory = where.node_level;
    inter.node_run_ahead = false;
    World world(where.threads, where.node_of, inter);
    // The members of the last process call otherwise (members of one
    // process that disagree are the engine's to find, before any process
    // is asked).
    const int last = world.size() - where.threads.back();
    check_everyone(kinds_in(world,
                            [&](Member& m) {
                              std::vector<double> x(8, 1), y(8);
                              m.allreduce(x.data(), y.data(), m.rank() >= last ? 5 : 4, op::sum);
                            }),
                   ErrorKind::count_mismatch);
    // Roots: the last process names another.
    check_everyone(kinds_in(world,
                            [&](Member& m) {
                              std::vector<double> x(4, 1), y(4);
                              m.reduce(x.data(), y.data(), 4, op::sum, m.rank() >= last ? 1 : 0);
                            }),
                   ErrorKind::root_mismatch);
    // Another collective: neither the count nor the root.
    check_everyone(kinds_in(world,
                            [&](Member& m) {
                              double x = 1, y = 0;
                              if (m.rank() >= last) {
                                m.scan(&x, &y, 1, op::sum);
                              } else {
                                m.allreduce(&x, &y, 1, op::sum);
                              }
                            }),
                   ErrorKind::mismatch);
    // A user op that throws in one process.
    const auto throwing = make_op<int>([](int a, int b) {
      if (a == 13 || b == 13) throw std::runtime_error("thirteen");
      return a + b;
    });
    check_everyone(kinds_in(world,
                            [&](Member& m) {
                              std::vector<int> x(4, m.rank() >= last ? 13 : 1), y(4);
                              m.allreduce(x.data(), y.data(), 4, throwing);
                            }),
                   ErrorKind::op);
    // A bad argument in one process.
    check_everyone(kinds_in(world,
                            [&](Member& m) {
                              std::vector<double> x(4, 1), y(4);
                              m.allreduce(m.rank() >= last ? nullptr : x.data(), y.data(), 4,
                                          op::sum);
                            }),
                   ErrorKind::argument);
    for (int k = 0; k < world.processes_count(); ++k) CHECK(world.team(k).usable());
  }
}
