// Reproducibility shape_independent on teams spanning processes: for a fixed
// team size p, every collective's result must have the bits of a plain
// sequential left fold ((x_0 ∘ x_1) ∘ …) ∘ x_{p-1} in team rank order,
// whatever the layout of the members over processes × threads × (virtual)
// nodes, the vector length and the chunk sizes. Inputs spread over 120
// binary orders of magnitude, so that any other bracketing shows in the bits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "hreduce/ops.hpp"
#include "tests/support/error_class.hpp"
#include "world.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// mantissa in [1, 2) × 2^U(-max_exp, max_exp), random sign.
double spread_value(std::uint64_t seed, int rank, std::size_t i, int max_exp) {
  const std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(rank) << 32 ^ i));
  const std::uint64_t g = mix64(h);
  const double mantissa = 1.0 + static_cast<double>(h >> 11) * 0x1.0p-53;
  const int exponent = static_cast<int>(g % (2 * max_exp + 1)) - max_exp;
  return std::ldexp((g >> 63) != 0 ? -mantissa : mantissa, exponent);
}

// The ops under test, each with the sequential fold the oracle runs.
enum class OpKind { sum, prod, halve_add };

double apply(OpKind kind, double a, double b) {
  switch (kind) {
    case OpKind::sum: return a + b;
    case OpKind::prod: return a * b;
    case OpKind::halve_add: return a * 0.5 + b;  // a·0.5 is exact: no contraction question
  }
  return 0;
}

const char* name_of(OpKind kind) {
  switch (kind) {
    case OpKind::sum: return "sum";
    case OpKind::prod: return "prod";
    case OpKind::halve_add: return "halve_add";
  }
  return "?";
}

// Neither associative nor commutative, and a user op (so the paths for ops
// that may throw run too).
const auto kHalveAdd =
    make_op<double>([](double a, double b) { return a * 0.5 + b; }, Commutativity::non_commutative)
        .named("halve and add");

template <class Fn>
void with_op(OpKind kind, Fn&& fn) {
  switch (kind) {
    case OpKind::sum: fn(op::sum); break;
    case OpKind::prod: fn(op::prod); break;
    case OpKind::halve_add: fn(kHalveAdd); break;
  }
}

constexpr OpKind kOps[] = {OpKind::sum, OpKind::prod, OpKind::halve_add};
constexpr std::size_t kLengths[] = {1, 7, 64, 65, 300, 3000};

// One vector length's cases for team size p: the counts, and every rank's
// input with its inclusive left-fold prefix (the oracle), long enough for
// every collective.
struct Case {
  std::size_t n = 0;
  std::vector<std::size_t> counts;  // reduce_scatter, uneven with empty blocks
  std::size_t block = 0;            // reduce_scatter_block
  std::size_t longest = 0;
  std::vector<std::vector<double>> in;      // [rank][element]
  std::vector<std::vector<double>> prefix;  // [rank][element]: left fold of ranks 0..rank

  std::size_t whole() const {
    std::size_t sum = 0;
    for (std::size_t c : counts) sum += c;
    return sum;
  }
};

Case make_case(int p, OpKind kind, std::size_t n) {
  Case c;
  c.n = n;
  for (int r = 0; r < p; ++r) {
    c.counts.push_back(r % 3 == 1 ? 0 : n / static_cast<std::size_t>(p) + r % 2 + 1);
  }
  c.block = std::max<std::size_t>(1, n / static_cast<std::size_t>(p));
  c.longest = std::max({n, c.whole(), c.block * static_cast<std::size_t>(p)});
  const int max_exp = kind == OpKind::prod ? 6 : 60;  // products stay in range
  const std::uint64_t seed = mix64(static_cast<std::uint64_t>(kind) * 1000003 + n * 31 + p);
  c.in.assign(p, std::vector<double>(c.longest));
  c.prefix.assign(p, std::vector<double>(c.longest));
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < c.longest; ++i) {
      c.in[r][i] = spread_value(seed, r, i, max_exp);
      c.prefix[r][i] = r == 0 ? c.in[0][i] : apply(kind, c.prefix[r - 1][i], c.in[r][i]);
    }
  }
  return c;
}

// All cases of team size p, by op and length.
struct Cases {
  int p = 0;
  std::vector<std::vector<Case>> by_op;  // [op][length index]
};

const Cases& cases_for(int p) {
  static std::mutex lock;
  static std::vector<std::unique_ptr<Cases>> made;
  std::lock_guard<std::mutex> hold(lock);
  for (const auto& c : made) {
    if (c->p == p) return *c;
  }
  auto cases = std::make_unique<Cases>();
  cases->p = p;
  for (OpKind kind : kOps) {
    cases->by_op.emplace_back();
    for (std::size_t n : kLengths) cases->by_op.back().push_back(make_case(p, kind, n));
  }
  made.push_back(std::move(cases));
  return *made.back();
}

bool same_bits(const double* a, const double* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(double)) == 0;
}

// What went wrong, from every member's thread.
class Problems {
 public:
  void add(std::string what) {
    std::lock_guard<std::mutex> hold(lock_);
    if (list_.size() < 20) list_.push_back(std::move(what));
    ++count_;
  }
  std::string text() const {
    std::string all;
    for (const std::string& s : list_) all += s + "\n";
    if (count_ > list_.size()) all += "... " + std::to_string(count_ - list_.size()) + " more\n";
    return all;
  }
  bool empty() const { return count_ == 0; }

 private:
  mutable std::mutex lock_;
  std::vector<std::string> list_;
  std::size_t count_ = 0;
};

const Collective kCollectives[] = {Collective::allreduce,      Collective::reduce,
                                   Collective::reduce_scatter, Collective::reduce_scatter_block,
                                   Collective::scan,           Collective::exscan};

// Member m's part of one call of `collective` on case c, compared with the
// oracle; `root` for reduce.
template <class Op>
void check_call(Member& m, const Op& op, const Case& c, Collective collective, int root,
                bool in_place, const CollectiveOptions& options, const std::string& where,
                Problems& problems) {
  const int r = m.rank(), p = m.size();
  const std::vector<double>& last = c.prefix[p - 1];
  std::vector<double> in(c.in[r]);
  std::vector<double> out(c.longest, -7.0);
  double* o = in_place ? in.data() : out.data();
  const double* expected = nullptr;
  std::size_t expect_n = 0;
  std::string label = where + " " + std::string(to_string(collective)) +
                      " n=" + std::to_string(c.n) + (in_place ? " in place" : "") + " member " +
                      std::to_string(r);
  try {
    switch (collective) {
      case Collective::allreduce:
        m.allreduce(in.data(), o, c.n, op, options);
        expected = last.data(), expect_n = c.n;
        break;
      case Collective::reduce:
        label += " root " + std::to_string(root);
        if (r != root) o = out.data();
        m.reduce(in.data(), o, c.n, op, root, options);
        if (r == root) expected = last.data(), expect_n = c.n;
        break;
      case Collective::reduce_scatter: {
        std::size_t offset = 0;
        for (int q = 0; q < r; ++q) offset += c.counts[q];
        m.reduce_scatter(in.data(), o, c.counts, op, options);
        expected = last.data() + offset, expect_n = c.counts[r];
        break;
      }
      case Collective::reduce_scatter_block:
        m.reduce_scatter_block(in.data(), o, c.block, op, options);
        expected = last.data() + c.block * r, expect_n = c.block;
        break;
      case Collective::scan:
        m.scan(in.data(), o, c.n, op, options);
        expected = c.prefix[r].data(), expect_n = c.n;
        break;
      case Collective::exscan:
        m.exscan(in.data(), o, c.n, op, options);
        if (r > 0) expected = c.prefix[r - 1].data(), expect_n = c.n;
        break;
    }
  } catch (const std::exception& e) {
    problems.add(label + ": threw " + e.what());
    return;
  }
  if (expected != nullptr && !same_bits(o, expected, expect_n)) {
    std::size_t i = 0;
    while (i < expect_n && std::memcmp(&o[i], &expected[i], sizeof(double)) == 0) ++i;
    char detail[160];
    std::snprintf(detail, sizeof detail, ": element %zu is %a, the left fold %a", i, o[i],
                  expected[i]);
    problems.add(label + detail);
  }
  if (expected == nullptr && !in_place) {
    // Nothing to receive: the output stays untouched.
    for (double v : out) {
      if (v != -7.0) {
        problems.add(label + ": wrote into an output that receives nothing");
        break;
      }
    }
  }
}

// Every op × length × collective on the members of `run`'s team(s).
template <class Run>
std::string check_all(int p, Run&& run) {
  const Cases& cases = cases_for(p);
  Problems problems;
  run([&](Member& m) {
    for (std::size_t o = 0; o < std::size(kOps); ++o) {
      with_op(kOps[o], [&](const auto& op) {
        for (std::size_t l = 0; l < std::size(kLengths); ++l) {
          const Case& c = cases.by_op[o][l];
          CollectiveOptions options;
          options.reproducibility = Reproducibility::shape_independent;
          if (c.n >= 65) options.chunk_bytes = 64;  // many chunks per slice
          const bool in_place = l % 2 == 1;
          const std::string where = name_of(kOps[o]);
          for (Collective collective : kCollectives) {
            const int roots = collective == Collective::reduce ? 2 : 1;
            for (int k = 0; k < roots; ++k) {
              const int root = k == 0 ? 0 : p - 1 - (p > 2 ? 1 : 0);
              check_call(m, op, c, collective, root, in_place, options, where, problems);
            }
          }
        }
      });
    }
  });
  return problems.text();
}

// Threads per process: every composition of p (p <= 6), or a representative
// set for larger teams.
std::vector<std::vector<int>> layouts_of(int p) {
  std::vector<std::vector<int>> all;
  if (p <= 6) {
    for (unsigned cuts = 0; cuts < (1u << (p - 1)); ++cuts) {
      std::vector<int> threads{1};
      for (int i = 1; i < p; ++i) {
        if (cuts & (1u << (i - 1))) {
          threads.push_back(1);
        } else {
          ++threads.back();
        }
      }
      all.push_back(threads);
    }
    return all;
  }
  all.push_back({p});
  all.push_back(std::vector<int>(p, 1));
  all.push_back(std::vector<int>(2, p / 2));
  all.push_back(std::vector<int>(p / 2, 2));
  all.push_back({1, p - 1});
  all.push_back({p - 1, 1});
  std::vector<int> threes(p / 3, 3);
  if (p % 3 != 0) threes.push_back(p % 3);
  all.push_back(threes);
  all.push_back({2, 1, p - 5, 2});
  return all;
}

std::string text_of(const std::vector<int>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "}";
}

// How the processes meet: the node level on one node, two virtual nodes,
// or messages only.
enum class Meeting { one_node, two_nodes, messages };

detail::InterOptions inter_options(Meeting meeting) {
  detail::InterOptions inter;
  inter.node_shared_memory = meeting != Meeting::messages;
  inter.node_chunk_bytes = 4096;  // the least: 3000 doubles take several chunks
  // The run_to_run allreduce would be pipelined from here.
  inter.pipeline_min_bytes = 4096;
  inter.pipeline_chunk_bytes = 1024;
  return inter;
}

std::vector<int> nodes_for(const std::vector<int>& threads, Meeting meeting) {
  const int processes = static_cast<int>(threads.size());
  if (meeting != Meeting::two_nodes) return {};
  std::vector<int> node_of(processes);
  for (int k = 0; k < processes; ++k) node_of[k] = k < (processes + 1) / 2 ? 0 : 1;
  return node_of;
}

void check_layouts(int p) {
  {
    INFO("p = " << p << ", one process (a plain team)");
    TeamOptions options;
    options.members = p;
    options.topology = Topology::synthetic("pack:1 core:2 pu:2");
    Team team(options);
    const std::string problems = check_all(p, [&](auto&& fn) { team.run(fn); });
    CHECK(problems == "");
  }
  const std::vector<std::vector<int>> layouts = layouts_of(p);
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const std::vector<int>& threads = layouts[i];
    for (Meeting meeting : {Meeting::one_node, Meeting::two_nodes, Meeting::messages}) {
      if (meeting == Meeting::two_nodes && threads.size() < 2) continue;
      // Messages only for every other layout of the many of p = 6: the
      // other two cover the node level, and the messages path is the same
      // code as the node level's here.
      if (meeting == Meeting::messages && p == 6 && i % 2 == 1) continue;
      World world(threads, nodes_for(threads, meeting), inter_options(meeting));
      INFO("p = " << p << ", threads " << text_of(threads)
                  << (meeting == Meeting::one_node    ? ", one node"
                      : meeting == Meeting::two_nodes ? ", two virtual nodes"
                                                      : ", messages only"));
      const std::string problems = check_all(p, [&](auto&& fn) { world.run(fn); });
      CHECK(problems == "");
    }
  }
}

// One collective call of `collective` on member `m`, for the error tests
// (which check what it throws, not what it returns).
template <class Op>
void call_collective(Member& m, Collective collective, const double* in, double* out, std::size_t n,
                     const Op& op, int root, std::span<const std::size_t> counts, std::size_t block,
                     const CollectiveOptions& options) {
  switch (collective) {
    case Collective::allreduce: m.allreduce(in, out, n, op, options); break;
    case Collective::reduce: m.reduce(in, out, n, op, root, options); break;
    case Collective::reduce_scatter: m.reduce_scatter(in, out, counts, op, options); break;
    case Collective::reduce_scatter_block:
      m.reduce_scatter_block(in, out, block, op, options);
      break;
    case Collective::scan: m.scan(in, out, n, op, options); break;
    case Collective::exscan: m.exscan(in, out, n, op, options); break;
  }
}

}  // namespace

TEST_CASE("shape_independent: every layout gives the left fold's bits",
          "[hybrid][reproducibility]") {
  const int p = GENERATE(2, 3, 4, 6, 8, 12);
  check_layouts(p);
}

TEST_CASE("shape_independent: run_to_run brackets by process (the test can fail)",
          "[hybrid][reproducibility]") {
  const Cases& cases = cases_for(4);
  const Case& c = cases.by_op[0][2];  // sum, 64 elements
  for (Meeting meeting : {Meeting::one_node, Meeting::messages}) {
    World world({2, 2}, {}, inter_options(meeting));
    std::vector<std::vector<double>> run_to_run(4), left_fold(4);
    world.run([&](Member& m) {
      const int r = m.rank();
      run_to_run[r].resize(c.n);
      left_fold[r].resize(c.n);
      m.allreduce(c.in[r].data(), run_to_run[r].data(), c.n, op::sum);
      CollectiveOptions options;
      options.reproducibility = Reproducibility::shape_independent;
      m.allreduce(c.in[r].data(), left_fold[r].data(), c.n, op::sum, options);
    });
    for (int r = 0; r < 4; ++r) {
      CHECK(same_bits(left_fold[r].data(), c.prefix[3].data(), c.n));
      CHECK_FALSE(same_bits(run_to_run[r].data(), c.prefix[3].data(), c.n));
    }
  }
}

TEST_CASE("shape_independent: a bad argument fails on every member alike",
          "[hybrid][reproducibility][errors]") {
  const Meeting meeting = GENERATE(Meeting::one_node, Meeting::two_nodes, Meeting::messages);
  const std::vector<int> threads{2, 1, 3};
  World world(threads, nodes_for(threads, meeting), inter_options(meeting));
  const Cases& cases = cases_for(6);
  const Case& c = cases.by_op[0][3];  // sum, 65 elements
  CollectiveOptions options;
  options.reproducibility = Reproducibility::shape_independent;
  for (Collective collective : kCollectives) {
    INFO(to_string(collective));
    std::vector<std::string> kind(6), text(6);
    world.run([&](Member& m) {
      const int r = m.rank();
      std::vector<double> out(c.longest);
      const double* in = r == 4 ? nullptr : c.in[r].data();  // the middle of process 2
      try {
        call_collective(m, collective, in, out.data(), c.n, op::sum, 3, c.counts, c.block, options);
        kind[r] = "none";
      } catch (const Error& e) {
        kind[r] = class_tag(e);
        text[r] = e.what();
      }
    });
    for (int r = 0; r < 6; ++r) {
      INFO("member " << r << ": " << text[r]);
      CHECK(kind[r] == "[ArgumentError] ");
      CHECK(text[r].find("member 4: in is a null pointer") != std::string::npos);
      // Over several nodes the nodes' relays prefix what they pass on, as
      // in the other paths.
      if (meeting != Meeting::two_nodes) CHECK(text[r] == text[0]);
    }
    // The team goes on: the next call is right.
    Problems problems;
    world.run([&](Member& m) {
      check_call(m, op::sum, c, collective, 3, false, options, "after the error", problems);
    });
    CHECK(problems.text() == "");
  }
}

TEST_CASE("shape_independent: an op that throws fails on every member alike",
          "[hybrid][reproducibility][errors]") {
  const Meeting meeting = GENERATE(Meeting::one_node, Meeting::two_nodes, Meeting::messages);
  const std::vector<int> threads{1, 2, 2};
  World world(threads, nodes_for(threads, meeting), inter_options(meeting));
  // Throws when it meets the marker, which only member 3's input holds.
  const auto picky = make_op<double>([](double a, double b) {
    if (a == 13.0 || b == 13.0) throw std::runtime_error("unlucky thirteen");
    return a + b;
  });
  CollectiveOptions options;
  options.reproducibility = Reproducibility::shape_independent;
  for (Collective collective : kCollectives) {
    INFO(to_string(collective));
    std::vector<std::string> kind(5), text(5);
    world.run([&](Member& m) {
      const int r = m.rank();
      const std::size_t n = 10;
      std::vector<double> in(n * 5, r == 3 ? 13.0 : 1.0), out(n * 5);
      const std::size_t counts[5] = {n, n, n, n, n};
      try {
        call_collective(m, collective, in.data(), out.data(), n, picky, 1, counts, n, options);
        kind[r] = "none";
      } catch (const Error& e) {
        kind[r] = class_tag(e);
        text[r] = e.what();
      }
    });
    for (int r = 0; r < 5; ++r) {
      INFO("member " << r << ": " << text[r]);
      CHECK(kind[r] == "[OpError] ");
      CHECK(text[r].find("the op threw: unlucky thirteen") != std::string::npos);
      if (meeting != Meeting::two_nodes) CHECK(text[r] == text[0]);
    }
    Problems problems;
    world.run([&](Member& m) {
      check_call(m, kHalveAdd, cases_for(5).by_op[2][1], collective, 1, false, options,
                 "after the op threw", problems);
    });
    CHECK(problems.text() == "");
  }
}
