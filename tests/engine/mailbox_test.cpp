// Small vectors by mailbox (src/engine/mailbox.hpp): the path must be taken
// where promised, give exactly the sliced path's bits and the sequential
// oracle's, and reuse its two announcement slots safely over many calls.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "hreduce/team.hpp"
#include "src/engine/mailbox.hpp"
#include "tests/engine/harness.hpp"

using namespace hreduce;

namespace {

// The collectives the mailbox serves (reduce_scatter's counts vary).
using Kind = Collective;
const Kind kKinds[] = {Kind::reduce, Kind::allreduce, Kind::reduce_scatter_block, Kind::scan,
                       Kind::exscan};

const char* name_of(Kind kind) { return to_string(kind).data(); }

Team team_of(int members) {
  TeamOptions options;
  options.members = members;
  options.topology = Topology::synthetic("pack:1 core:4 pu:2");
  return Team(options);
}

std::size_t input_length(Kind kind, std::size_t n, int p) {
  return kind == Kind::reduce_scatter_block ? n * p : n;
}

// Member r's expected output: a plain left-to-right fold in rank order.
template <class T, class Fold>
std::vector<T> oracle(Kind kind, const std::vector<std::vector<T>>& in, int r, int root,
                      std::size_t n, Fold fold) {
  const int p = static_cast<int>(in.size());
  int first = 0, last = p;  // ranks folded
  std::size_t offset = 0;
  switch (kind) {
    case Kind::reduce:
      if (r != root) return {};
      break;
    case Kind::allreduce: break;
    case Kind::reduce_scatter_block: offset = n * r; break;
    case Kind::scan: last = r + 1; break;
    case Kind::exscan:
      if (r == 0) return {};
      last = r;
      break;
    case Kind::reduce_scatter: break;  // not in kKinds
  }
  std::vector<T> acc(in[first].begin() + offset, in[first].begin() + offset + n);
  for (int q = first + 1; q < last; ++q) {
    for (std::size_t i = 0; i < n; ++i) acc[i] = fold(acc[i], in[q][offset + i]);
  }
  return acc;
}

template <class T, class Op>
void call(Member& m, Kind kind, const T* in, T* out, std::size_t n, const Op& op, int root,
          const CollectiveOptions& options) {
  switch (kind) {
    case Kind::reduce: m.reduce(in, out, n, op, root, options); break;
    case Kind::allreduce: m.allreduce(in, out, n, op, options); break;
    case Kind::reduce_scatter_block: m.reduce_scatter_block(in, out, n, op, options); break;
    case Kind::scan: m.scan(in, out, n, op, options); break;
    case Kind::exscan: m.exscan(in, out, n, op, options); break;
    case Kind::reduce_scatter: break;  // not in kKinds
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b, std::size_t n) {
  return std::memcmp(a.data(), b.data(), n * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("small vectors go by mailbox and give the sliced path's bits", "[engine][mailbox]") {
  const int p = GENERATE(1, 2, 3, 5, 7);
  const bool in_place = GENERATE(false, true);
  Team team = team_of(p);
  std::mt19937_64 random(p * 2 + in_place);
  // Values of mixed magnitude: a different bracketing changes the bits.
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (Kind kind : kKinds) {
    // Elements per member (block size for reduce_scatter_block) on both
    // sides of the mailbox limit.
    const std::size_t limit = detail::kMailboxBytes / sizeof(double);
    const std::size_t mailbox_n = kind == Kind::reduce_scatter_block ? limit / p : limit;
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, mailbox_n, mailbox_n + 1}) {
      const int root = static_cast<int>(n % p);
      const std::size_t len = input_length(kind, n, p);
      std::vector<std::vector<double>> in(p, std::vector<double>(len));
      for (auto& x : in) {
        for (double& v : x) v = std::ldexp(value(random), static_cast<int>(random() % 40) - 20);
      }
      INFO(name_of(kind) << ", " << p << " members, n=" << n << (in_place ? ", in place" : ""));
      CollectiveOptions sliced;
      sliced.algorithm = Algorithm::sliced;
      const double untouched = -7.5;
      std::vector<std::vector<double>> automatic_out(p), sliced_out(p);
      std::vector<std::uint64_t> by_mailbox(p);
      team.run([&](Member& m) {
        const int r = m.rank();
        auto run_once = [&](const CollectiveOptions& options, std::vector<double>& result) {
          std::vector<double> buffer = in_place ? in[r] : std::vector<double>(len, untouched);
          call(m, kind, in_place ? buffer.data() : in[r].data(), buffer.data(), n, op::sum, root,
               options);
          result = buffer;
        };
        const std::uint64_t before = detail::mailbox_calls_on_this_thread;
        run_once(CollectiveOptions{}, automatic_out[r]);
        by_mailbox[r] = detail::mailbox_calls_on_this_thread - before;
        run_once(sliced, sliced_out[r]);
      });
      const bool expect_mailbox = len * sizeof(double) <= detail::kMailboxBytes;
      CHECK((team.local_path(kind, len * sizeof(double)) == "mailbox") == expect_mailbox);
      for (int r = 0; r < p; ++r) {
        INFO("member " << r);
        CHECK(by_mailbox[r] == (expect_mailbox ? 1u : 0u));
        CHECK(same_bits(automatic_out[r], sliced_out[r], len));
        const auto sum = [](double a, double b) { return a + b; };
        const auto expected = oracle(kind, in, r, root, n, sum);
        if (expected.empty()) {
          // Not this member's to receive: its buffer is as it was.
          CHECK(automatic_out[r] == (in_place ? in[r] : std::vector<double>(len, untouched)));
        } else {
          CHECK(same_bits(automatic_out[r], expected, n));
        }
      }
    }
  }
}

TEST_CASE("back-to-back small calls reuse the mailbox slots safely", "[engine][mailbox]") {
  // More members than this machine's cores, calls of every kind in turn:
  // a member that returns early and races into the next call must never
  // overwrite a copy another member is still folding.
  const int p = GENERATE(2, 3, 6);
  const int rounds = test::quick() ? 150 : 1500;
  Team team = team_of(p);
  std::vector<long> failures(p);
  team.run([&](Member& m) {
    const int r = m.rank();
    std::vector<long> in(4 * p), out(4 * p);
    for (int round = 0; round < rounds; ++round) {
      const Kind kind = kKinds[round % 5];
      const std::size_t n = 1 + round % 4;
      const int root = round % p;
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = (round + 1) * 1000 + r * 10 + i;
      std::fill(out.begin(), out.end(), -1);
      call(m, kind, in.data(), out.data(), n, op::sum, root, CollectiveOptions{});
      // Each expected element: the sum over the ranks folded of
      // (round+1)*1000 + q*10 + offset + i.
      int first = 0, last = p;
      std::size_t offset = 0;
      bool receives = true;
      switch (kind) {
        case Kind::reduce: receives = r == root; break;
        case Kind::allreduce: break;
        case Kind::reduce_scatter_block: offset = n * r; break;
        case Kind::scan: last = r + 1; break;
        case Kind::exscan:
          receives = r > 0;
          last = r;
          break;
        case Kind::reduce_scatter: break;  // not in kKinds
      }
      for (std::size_t i = 0; i < n; ++i) {
        long expected = -1;
        if (receives) {
          expected = 0;
          for (int q = first; q < last; ++q) expected += (round + 1) * 1000 + q * 10 + offset + i;
        }
        if (out[i] != expected) ++failures[r];
      }
    }
  });
  for (int r = 0; r < p; ++r) {
    INFO("member " << r);
    CHECK(failures[r] == 0);
  }
}

TEST_CASE("ops that may throw, large teams and explicit algorithms skip the mailbox",
          "[engine][mailbox]") {
  const auto plus = make_op<int>([](int a, int b) { return a + b; });
  // Runs a 2-element allreduce of {1, 2} on every member; returns how many
  // calls each member made by mailbox, and checks every member's result.
  auto mailbox_calls = [](Team& team, const auto& op, const CollectiveOptions& options) {
    std::vector<std::uint64_t> calls(team.size());
    std::vector<std::vector<int>> out(team.size(), std::vector<int>(2));
    team.run([&](Member& m) {
      const int in[2] = {1, 2};
      const std::uint64_t before = detail::mailbox_calls_on_this_thread;
      m.allreduce(in, out[m.rank()].data(), 2, op, options);
      calls[m.rank()] = detail::mailbox_calls_on_this_thread - before;
    });
    for (const auto& o : out) CHECK(o == std::vector<int>{team.size(), 2 * team.size()});
    return calls;
  };
  Team small = team_of(3);
  CHECK(mailbox_calls(small, op::sum, CollectiveOptions{}) == std::vector<std::uint64_t>(3, 1));
  CHECK(mailbox_calls(small, plus, CollectiveOptions{}) == std::vector<std::uint64_t>(3, 0));
  CollectiveOptions tree;
  tree.algorithm = Algorithm::tree;
  CHECK(mailbox_calls(small, op::sum, tree) == std::vector<std::uint64_t>(3, 0));
  Team large = team_of(8);  // automatic sends 8 members down the tree
  CHECK(mailbox_calls(large, op::sum, CollectiveOptions{}) == std::vector<std::uint64_t>(8, 0));
}

TEST_CASE("explain names the mailbox where a call would take it", "[engine][mailbox]") {
  Team two = team_of(2);
  CHECK_THAT(two.explain(Collective::reduce, 8), Catch::Contains("mailbox"));
  CHECK_THAT(two.explain(Collective::scan, detail::kMailboxBytes), Catch::Contains("mailbox"));
  CHECK_THAT(two.explain(Collective::scan, detail::kMailboxBytes + 8), Catch::Contains("sliced"));
  CHECK_THAT(two.explain(Collective::reduce_scatter, 8), Catch::Contains("sliced"));
  Team eight = team_of(8);
  CHECK_THAT(eight.explain(Collective::allreduce, 8), Catch::Contains("tree"));
  CHECK_THAT(eight.explain(Collective::scan, 8), Catch::Contains("sliced"));
  CHECK(two.local_path(Collective::allreduce, 8) == "mailbox");
  CHECK(two.local_path(Collective::allreduce, detail::kMailboxBytes + 8) == "sliced");
  CHECK(eight.local_path(Collective::allreduce, 8) == "tree");
  CHECK(eight.local_path(Collective::reduce, 1 << 20) == "sliced");
}
