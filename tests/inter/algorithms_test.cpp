// Conformance: every inter-process algorithm, on P participants (threads over
// an InMemoryFabric), against a sequential rank-order oracle — for any P,
// n = 0, non-zero roots, in place and not, and a non-commutative op wherever
// the algorithm accepts one.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"
#include "tests/inter/harness.hpp"

using namespace hreduce;
using namespace hreduce::test;
using detail::Channel;
using detail::ErasedOp;
using detail::InMemoryFabric;
using detail::Workspace;
namespace inter = hreduce::detail::inter;

namespace {

using AllreduceFn = void (*)(Channel&, void*, std::size_t, const ErasedOp&, Workspace&);
struct NamedAllreduce {
  const char* name;
  AllreduceFn fn;
  bool commutative_only;
};
const NamedAllreduce kAllreduces[] = {
    {"recursive_doubling_allreduce", &inter::recursive_doubling_allreduce, false},
    {"rabenseifner_allreduce", &inter::rabenseifner_allreduce, false},
    {"ring_allreduce", &inter::ring_allreduce, true},
};

using ReduceScatterFn = void (*)(Channel&, const void*, void*, const std::size_t*, const ErasedOp&,
                                 Workspace&);
struct NamedReduceScatter {
  const char* name;
  ReduceScatterFn fn;
  bool commutative_only;
};
const NamedReduceScatter kReduceScatters[] = {
    {"pairwise_reduce_scatter", &inter::pairwise_reduce_scatter, true},
    {"reduce_then_scatter", &inter::reduce_then_scatter, false},
};

std::vector<int> roots_for(int P) {
  const std::set<int> roots = {0, P - 1, P / 2, 1 % P};
  return {roots.begin(), roots.end()};
}

}  // namespace

TEMPLATE_TEST_CASE("allreduce: every participant gets x_0 ∘ … ∘ x_{P-1}, bitwise equal",
                   "[inter][allreduce][conformance]", DoubleSum, Int32Sum, AffineCompose) {
  using T = typename TestType::T;
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(from_range(element_counts()));
  const Data<TestType> data(P, n);
  const ErasedOp op = TestType::erased();
  for (const NamedAllreduce& algorithm : kAllreduces) {
    if (algorithm.commutative_only && !TestType::commutative) continue;
    INFO(algorithm.name << ", " << TestType::name << ", P = " << P << ", n = " << n);
    InMemoryFabric fabric(P);
    std::vector<std::vector<T>> buf = data.x;
    run_participants(fabric, [&](Channel& channel, int r) {
      Workspace workspace;
      algorithm.fn(channel, buf[r].data(), n, op, workspace);
    });
    for (int r = 0; r < P; ++r) {
      INFO("participant " << r);
      REQUIRE(buf[r] == data.total());
      REQUIRE(bitwise_equal(buf[r], buf[0]));
    }
    REQUIRE(fabric.pending() == 0);
  }
}

TEMPLATE_TEST_CASE("binomial_reduce: the root gets x_0 ∘ … ∘ x_{P-1}, for any root",
                   "[inter][reduce][conformance]", DoubleSum, Int32Sum, AffineCompose) {
  using T = typename TestType::T;
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(from_range(element_counts()));
  const Data<TestType> data(P, n);
  const ErasedOp op = TestType::erased();
  for (int root : roots_for(P)) {
    INFO(TestType::name << ", P = " << P << ", n = " << n << ", root = " << root);
    InMemoryFabric fabric(P);
    std::vector<std::vector<T>> buf = data.x;
    run_participants(fabric, [&](Channel& channel, int r) {
      Workspace workspace;
      inter::binomial_reduce(channel, buf[r].data(), n, op, root, workspace);
    });
    REQUIRE(buf[root] == data.total());
    REQUIRE(fabric.pending() == 0);
  }
}

TEST_CASE("binomial_broadcast: every participant gets the root's bytes",
          "[inter][broadcast][conformance]") {
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(from_range(element_counts()));
  const Data<Int32Sum> data(P, n);
  for (int root : roots_for(P)) {
    INFO("P = " << P << ", n = " << n << ", root = " << root);
    InMemoryFabric fabric(P);
    std::vector<std::vector<std::int32_t>> buf = data.x;
    run_participants(fabric, [&](Channel& channel, int r) {
      inter::binomial_broadcast(channel, buf[r].data(), n * sizeof(std::int32_t), root);
    });
    for (int r = 0; r < P; ++r) {
      INFO("participant " << r);
      REQUIRE(buf[r] == data.x[root]);
    }
    REQUIRE(fabric.pending() == 0);
  }
}

TEMPLATE_TEST_CASE("hypercube_scan: inclusive and exclusive prefixes in rank order",
                   "[inter][scan][conformance]", DoubleSum, Int32Sum, AffineCompose) {
  using T = typename TestType::T;
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(from_range(element_counts()));
  const bool exclusive = GENERATE(false, true);
  const bool in_place = GENERATE(false, true);
  INFO(TestType::name << ", P = " << P << ", n = " << n << (exclusive ? ", exclusive" : "")
                      << (in_place ? ", in place" : ""));
  const Data<TestType> data(P, n);
  const ErasedOp op = TestType::erased();
  // A sentinel output, so an output that must stay untouched can be checked.
  std::vector<T> sentinel(n);
  for (std::size_t i = 0; i < n; ++i) sentinel[i] = TestType::input(P + 7, i);
  std::vector<std::vector<T>> out(static_cast<std::size_t>(P), sentinel);
  if (in_place) out = data.x;

  InMemoryFabric fabric(P);
  run_participants(fabric, [&](Channel& channel, int r) {
    Workspace workspace;
    const void* in = in_place ? out[r].data() : data.x[r].data();
    inter::hypercube_scan(channel, in, out[r].data(), n, op, exclusive, workspace);
  });
  for (int r = 0; r < P; ++r) {
    INFO("participant " << r);
    if (!exclusive) {
      REQUIRE(out[r] == data.prefix[r]);
    } else if (r > 0) {
      REQUIRE(out[r] == data.prefix[r - 1]);
    } else {
      REQUIRE(out[r] == (in_place ? data.x[0] : sentinel));  // untouched
    }
  }
  REQUIRE(fabric.pending() == 0);
}

TEMPLATE_TEST_CASE("reduce_scatter: participant r gets block r of x_0 ∘ … ∘ x_{P-1}",
                   "[inter][reduce_scatter][conformance]", DoubleSum, Int32Sum, AffineCompose) {
  using T = typename TestType::T;
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(from_range(element_counts()));
  const bool uneven = GENERATE(false, true);
  const bool in_place = GENERATE(false, true);
  const std::vector<std::size_t> counts = block_counts(P, n, uneven);
  std::size_t total = 0;
  std::vector<std::size_t> offsets;
  for (std::size_t c : counts) {
    offsets.push_back(total);
    total += c;
  }
  const Data<TestType> data(P, total);
  const ErasedOp op = TestType::erased();
  for (const NamedReduceScatter& algorithm : kReduceScatters) {
    if (algorithm.commutative_only && !TestType::commutative) continue;
    INFO(algorithm.name << ", " << TestType::name << ", P = " << P << ", total = " << total
                        << (uneven ? ", uneven" : "") << (in_place ? ", in place" : ""));
    std::vector<std::vector<T>> out(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r) {
      out[r] = in_place ? data.x[r] : std::vector<T>(counts[r], TestType::input(P + 7, 0));
    }
    InMemoryFabric fabric(P);
    run_participants(fabric, [&](Channel& channel, int r) {
      Workspace workspace;
      const void* in = in_place ? out[r].data() : data.x[r].data();
      algorithm.fn(channel, in, out[r].data(), counts.data(), op, workspace);
    });
    for (int r = 0; r < P; ++r) {
      INFO("participant " << r);
      const auto first = data.total().begin() + static_cast<std::ptrdiff_t>(offsets[r]);
      const std::vector<T> expected(first, first + static_cast<std::ptrdiff_t>(counts[r]));
      const std::vector<T> got(out[r].begin(),
                               out[r].begin() + static_cast<std::ptrdiff_t>(counts[r]));
      REQUIRE(got == expected);
    }
    REQUIRE(fabric.pending() == 0);
  }
}

TEMPLATE_TEST_CASE("execute_schedule runs any valid schedule in rank order",
                   "[inter][executor][conformance]", Int32Sum, AffineCompose) {
  using T = typename TestType::T;
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(as<std::size_t>{}, 0, 1, 100);
  const Data<TestType> data(P, n);
  const ErasedOp op = TestType::erased();
  // Flat trees rooted inside the range receive from members on both sides in
  // one step: above ascending, then below descending, is still rank order.
  std::vector<Schedule> trees = {schedules::flat(P),        schedules::chain(P),
                                 schedules::binary(P),      schedules::binomial(P),
                                 schedules::knomial(P, 3),  schedules::knomial(P, 4),
                                 schedules::flat(P, P / 2), schedules::flat(P, P - 1)};
  if (TestType::commutative) {
    // Rotated to another root: valid, but no longer rank-contiguous.
    trees.push_back(schedules::binomial(P, P - 1));
    trees.push_back(schedules::knomial(P, 3, P / 2));
    trees.push_back(schedules::chain(P, P / 2));
  }
  for (const Schedule& tree : trees) {
    INFO(tree.describe() << TestType::name << ", n = " << n);
    REQUIRE(tree.is_valid(TestType::commutative));
    InMemoryFabric fabric(P);
    std::vector<std::vector<T>> buf = data.x;
    run_participants(fabric, [&](Channel& channel, int r) {
      Workspace workspace;
      inter::execute_schedule(channel, tree, buf[r].data(), n, op, workspace,
                              detail::tags::first_free);
    });
    REQUIRE(buf[tree.root()] == data.total());
    REQUIRE(fabric.pending() == 0);
  }
}

TEST_CASE("commutative-only algorithms reject a non-commutative op on every participant",
          "[inter][negative]") {
  const int P = GENERATE(1, 2, 5);
  const ErasedOp op = AffineCompose::erased();
  const std::size_t n = 4;
  const std::vector<std::size_t> counts(static_cast<std::size_t>(P), 1);
  const Data<AffineCompose> data(P, n * static_cast<std::size_t>(P));
  using Call = void (*)(Channel&, std::vector<Affine>&, const std::vector<std::size_t>&,
                        const ErasedOp&, Workspace&);
  const std::pair<const char*, Call> calls[] = {
      {"ring_allreduce",
       [](Channel& c, std::vector<Affine>& b, const std::vector<std::size_t>&, const ErasedOp& o,
          Workspace& w) { inter::ring_allreduce(c, b.data(), 4, o, w); }},
      {"pairwise_reduce_scatter",
       [](Channel& c, std::vector<Affine>& b, const std::vector<std::size_t>& k, const ErasedOp& o,
          Workspace& w) { inter::pairwise_reduce_scatter(c, b.data(), b.data(), k.data(), o, w); }},
  };
  for (const auto& [name, call] : calls) {
    INFO(name << ", P = " << P);
    InMemoryFabric fabric(P);
    std::vector<std::vector<Affine>> buf = data.x;
    std::vector<std::string> messages(static_cast<std::size_t>(P));
    run_participants(fabric, [&](Channel& channel, int r) {
      Workspace workspace;
      try {
        call(channel, buf[r], counts, op, workspace);
      } catch (const Error& e) {
        messages[r] = e.what();
      }
    });
    for (int r = 0; r < P; ++r) {
      INFO("participant " << r);
      CHECK_THAT(messages[r],
                 Catch::StartsWith(std::string(name) + ": needs a commutative op, got the "
                                                       "non-commutative op \"user op\""));
    }
    CHECK(buf == data.x);          // nothing was touched
    CHECK(fabric.pending() == 0);  // nothing was sent
  }
}

TEST_CASE("a root outside 0..P-1 is an error naming it", "[inter][negative]") {
  InMemoryFabric fabric(3);
  Workspace workspace;
  double x = 1;
  const ErasedOp op = DoubleSum::erased();
  CHECK_THROWS_WITH(inter::binomial_reduce(fabric.endpoint(0), &x, 1, op, 3, workspace),
                    "binomial_reduce: root 3 is outside 0..2");
  CHECK_THROWS_WITH(inter::binomial_broadcast(fabric.endpoint(0), &x, 8, -1),
                    "binomial_broadcast: root -1 is outside 0..2");
  CHECK_THROWS_AS(inter::execute_schedule(fabric.endpoint(0), schedules::binomial(4), &x, 1, op,
                                          workspace, detail::tags::first_free),
                  Error);
}
