// The leaders' algorithm as a pure function: hand-computed cases of the α–β
// model, the participants each regime runs over, forced algorithms falling
// back as the executor does, and explain's reasons always naming the
// algorithm the decision made.
#include "src/hybrid/inter_decision.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace hreduce::detail {
namespace {

constexpr CollectiveKind kKinds[] = {
    CollectiveKind::allreduce,      CollectiveKind::reduce,
    CollectiveKind::reduce_scatter, CollectiveKind::reduce_scatter_block,
    CollectiveKind::scan,           CollectiveKind::exscan,
};

InterShape messages(int processes, int nodes = 1, bool grouped = false) {
  return {processes, nodes, false, grouped};
}

InterShape node_level(int processes, int nodes) { return {processes, nodes, true, false}; }

}  // namespace

TEST_CASE("allreduce takes the α–β model's cheapest (cost_model.cpp's table)") {
  InterOverrides o;  // α = 2 µs, β = 0.2 ns/B
  const InterShape sixteen = messages(16);
  // 1 KiB: recursive doubling 8.8 µs, Rabenseifner 16.4 µs, ring 60.4 µs.
  CHECK(decide_between_processes(CollectiveKind::allreduce, 1024, true, sixteen, o).algorithm ==
        InterAlgorithm::recursive_doubling);
  // 1 MiB: recursive doubling 847 µs, Rabenseifner 409 µs, ring 453 µs.
  CHECK(decide_between_processes(CollectiveKind::allreduce, 1 << 20, true, sixteen, o).algorithm ==
        InterAlgorithm::rabenseifner);
  // P = 3, 1 MiB: no power of two, so recursive doubling (846.9 µs) and
  // Rabenseifner (711.0 µs) pay the fold steps; ring takes 287.6 µs.
  CHECK(decide_between_processes(CollectiveKind::allreduce, 1 << 20, true, messages(3), o)
            .algorithm == InterAlgorithm::ring);
}

TEST_CASE("each regime's participants: processes, or node leaders") {
  const InterOverrides o;
  for (CollectiveKind kind : kKinds) {
    CAPTURE(static_cast<int>(kind));
    CHECK(decide_between_processes(kind, 64, true, messages(6, 3), o).participants == 6);
    // The node level: only the nodes' first processes exchange messages.
    CHECK(decide_between_processes(kind, 64, true, node_level(6, 3), o).participants == 3);
    CHECK(decide_between_processes(kind, 64, true, node_level(4, 1), o).participants == 1);
    // Grouping by node without a segment concerns allreduce alone.
    const int grouped =
        decide_between_processes(kind, 64, true, messages(6, 3, true), o).participants;
    CHECK(grouped == (kind == CollectiveKind::allreduce ? 3 : 6));
  }
}

TEST_CASE("what each collective runs between processes") {
  const InterOverrides o;
  auto algorithm = [&](CollectiveKind kind, bool commutative, InterShape shape) {
    return decide_between_processes(kind, 1 << 20, commutative, shape, o).algorithm;
  };
  CHECK(algorithm(CollectiveKind::reduce, true, messages(4)) == InterAlgorithm::binomial);
  CHECK(algorithm(CollectiveKind::scan, false, messages(4)) == InterAlgorithm::hypercube);
  CHECK(algorithm(CollectiveKind::exscan, true, node_level(8, 2)) == InterAlgorithm::hypercube);
  CHECK(algorithm(CollectiveKind::reduce_scatter, true, messages(4)) == InterAlgorithm::pairwise);
  CHECK(algorithm(CollectiveKind::reduce_scatter_block, false, messages(4)) ==
        InterAlgorithm::reduce_then_scatter);
  // Several nodes with the node level: the whole vector is allreduced
  // between the node leaders (16 of them, 1 MiB: Rabenseifner, as above).
  CHECK(algorithm(CollectiveKind::reduce_scatter, true, node_level(32, 16)) ==
        InterAlgorithm::rabenseifner);
  // Ring needs a commutative op; Rabenseifner does not.
  CHECK(algorithm(CollectiveKind::allreduce, false, messages(16)) == InterAlgorithm::rabenseifner);
}

TEST_CASE("forced algorithms fall back as the executor does") {
  InterOverrides o;
  o.allreduce = InterAlgorithm::ring;
  CHECK(decide_between_processes(CollectiveKind::allreduce, 8, true, messages(4), o).algorithm ==
        InterAlgorithm::ring);
  CHECK(decide_between_processes(CollectiveKind::allreduce, 8, false, messages(4), o).algorithm ==
        InterAlgorithm::recursive_doubling);
  o.allreduce = InterAlgorithm::binomial;  // not an allreduce algorithm
  CHECK(decide_between_processes(CollectiveKind::allreduce, 8, true, messages(4), o).algorithm ==
        InterAlgorithm::recursive_doubling);
  o.reduce_scatter = InterAlgorithm::pairwise;
  CHECK(decide_between_processes(CollectiveKind::reduce_scatter, 8, false, messages(4), o)
            .algorithm == InterAlgorithm::reduce_then_scatter);
  o.reduce_scatter = InterAlgorithm::reduce_then_scatter;
  CHECK(
      decide_between_processes(CollectiveKind::reduce_scatter, 8, true, messages(4), o).algorithm ==
      InterAlgorithm::reduce_then_scatter);
}

TEST_CASE("the reason given is always for the choice made") {
  const std::vector<InterShape> shapes = {messages(2),      messages(5),      messages(12, 3, true),
                                          node_level(4, 1), node_level(9, 3), node_level(64, 16)};
  const std::vector<InterAlgorithm> forced = {InterAlgorithm::automatic, InterAlgorithm::ring,
                                              InterAlgorithm::pairwise,
                                              InterAlgorithm::rabenseifner};
  for (const InterShape& shape : shapes) {
    for (CollectiveKind kind : kKinds) {
      for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}, std::size_t{16} << 20}) {
        for (bool commutative : {true, false}) {
          for (InterAlgorithm f : forced) {
            InterOverrides o;
            o.allreduce = f;
            o.reduce_scatter = f;
            const InterDecision d = decide_between_processes(kind, bytes, commutative, shape, o);
            const Choice c = explain_between_processes(kind, bytes, commutative, shape, o);
            CAPTURE(static_cast<int>(kind), bytes, commutative, shape.processes, shape.nodes,
                    shape.node_level, c.why);
            CHECK(c.algorithm == d.algorithm);
            const std::string name(to_string(d.algorithm));
            const bool names_it = c.why.find("-> " + name) != std::string::npos ||
                                  c.why.find("runs " + name) != std::string::npos;
            CHECK(names_it);
            CHECK(c.why.find("over " + std::to_string(d.participants) + " participants") !=
                  std::string::npos);
          }
        }
      }
    }
  }
}

TEST_CASE("a long allreduce is pipelined only where some process has helpers") {
  const std::size_t min = std::size_t{1} << 20, chunk = 256 << 10;
  CHECK(pipelines_allreduce(min, min, chunk, true));
  CHECK_FALSE(pipelines_allreduce(min - 1, min, chunk, true));
  CHECK_FALSE(pipelines_allreduce(min, min, chunk, false));  // lone members: nothing to overlap
  CHECK_FALSE(pipelines_allreduce(min, 0, chunk, true));     // switched off
  CHECK_FALSE(pipelines_allreduce(min, min, 0, true));
}

}  // namespace hreduce::detail
