// Nonblocking (m.iallreduce ...) and persistent (m.allreduce_init ...)
// calls on teams of threads, against a sequential oracle: every collective
// × op class (sum, MAXLOC, a non-commutative and non-associative user op)
// × in place or not × team sizes × vector lengths (many chunks, one chunk,
// none); several calls outstanding completed in reverse by test() loops;
// bitwise agreement with the blocking calls; errors, timeouts and
// destroyed requests. Teams are driven by Team::run's threads (no OpenMP:
// the test also runs under ThreadSanitizer). With HREDUCE_PROGRESS_THREAD=1
// (the _progress_thread variant of this test) every member's calls run on
// a queue with a thread of its own, as blocking calls (call_queue.hpp).
#include <pthread.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "hreduce/team.hpp"

using namespace hreduce;
using detail::CollectiveKind;

namespace {

Team team_of(int members) {
  TeamOptions options;
  options.members = members;
  options.topology = Topology::synthetic("pack:1 core:4 pu:2");
  options.bind = false;
  options.timeout = std::chrono::milliseconds(20000);
  return Team(options);
}

// Small chunks, so that short vectors still make many chunks.
CollectiveOptions small_chunks() {
  CollectiveOptions o;
  o.chunk_bytes = 64;
  return o;
}

using Pair = ValueIndex<double, int>;

// The three op classes and their sequential definitions.
struct SumCase {
  using T = double;
  static T value(int m, std::size_t i) { return static_cast<double>((m * 7 + i * 3) % 11) + m; }
  static T apply(T a, T b) { return a + b; }
  static constexpr auto op() { return op::sum; }
};
struct MaxlocCase {
  using T = Pair;
  // Ties between members on purpose: the lower index must win.
  static T value(int m, std::size_t i) { return {static_cast<double>((m + i) % 3), m}; }
  static T apply(T a, T b) {
    if (a.value != b.value) return a.value > b.value ? a : b;
    return a.index < b.index ? a : b;
  }
  static constexpr auto op() { return op::maxloc; }
};
struct OrderedCase {  // a ∘ b = 31a + b: neither commutative nor associative
  using T = std::uint32_t;
  static T value(int m, std::size_t i) { return static_cast<T>(m * 1000 + i + 1); }
  static T apply(T a, T b) { return a * 31u + b; }
  static auto op() {
    return make_op<T>([](const T& a, const T& b) { return a * 31u + b; },
                      Commutativity::non_commutative);
  }
};

struct Shape {
  CollectiveKind kind;
  std::size_t n;  // elements per member, or per block
  int root = 0;
};

std::size_t input_size(const Shape& s, int p) {
  const bool blocks =
      s.kind == CollectiveKind::reduce_scatter || s.kind == CollectiveKind::reduce_scatter_block;
  return blocks ? s.n * p : s.n;
}

// reduce_scatter's counts: uneven blocks, one of them empty where p > 1.
std::vector<std::size_t> counts_for(const Shape& s, int p) {
  std::vector<std::size_t> counts(p, s.n);
  if (p > 1) {
    counts[0] = s.n + s.n / 2;
    counts[p - 1] = s.n - s.n / 2;
  }
  if (p > 2) {
    counts[1] += counts[2];
    counts[2] = 0;
  }
  return counts;
}

// What member r's output holds after the call: the oracle, with `untouched`
// where the call writes nothing.
template <class C>
std::vector<typename C::T> expected(const Shape& s, int p, int r, const typename C::T& untouched) {
  using T = typename C::T;
  const std::size_t total = input_size(s, p);
  auto fold = [&](int last, std::size_t i) {  // x_0 ∘ … ∘ x_{last-1}, left to right
    T acc = C::value(0, i);
    for (int q = 1; q < last; ++q) acc = C::apply(acc, C::value(q, i));
    return acc;
  };
  std::vector<T> out(total, untouched);
  if (s.kind == CollectiveKind::reduce_scatter || s.kind == CollectiveKind::reduce_scatter_block) {
    const std::vector<std::size_t> counts =
        s.kind == CollectiveKind::reduce_scatter ? counts_for(s, p) : std::vector(p, s.n);
    std::size_t start = 0;
    for (int q = 0; q < r; ++q) start += counts[q];
    for (std::size_t i = 0; i < counts[r]; ++i) out[i] = fold(p, start + i);
    return out;
  }
  for (std::size_t i = 0; i < s.n; ++i) {
    switch (s.kind) {
      case CollectiveKind::reduce:
        if (r == s.root) out[i] = fold(p, i);
        break;
      case CollectiveKind::allreduce: out[i] = fold(p, i); break;
      case CollectiveKind::scan: out[i] = fold(r + 1, i); break;
      case CollectiveKind::exscan:
        if (r > 0) out[i] = fold(r, i);
        break;
      default: break;
    }
  }
  return out;
}

// Starts (or prepares, persistent) member m's call of `s`; in place passes
// one range, otherwise pointers (with options) or ranges (without).
template <bool kPersistent, class T, class Op>
auto issue(Member& m, const Shape& s, std::vector<T>& in, std::vector<T>& out, bool in_place,
           const Op& op, std::span<const std::size_t> counts) {
  const CollectiveOptions o = small_chunks();
  auto pick = [&](auto&& nonblocking, auto&& persistent) {
    if constexpr (kPersistent) {
      return persistent();
    } else {
      return nonblocking();
    }
  };
  switch (s.kind) {
    case CollectiveKind::reduce:
      if (in_place)
        return pick([&] { return m.ireduce(in, op, s.root, o); },
                    [&] { return m.reduce_init(in, op, s.root, o); });
      return pick([&] { return m.ireduce(in.data(), out.data(), s.n, op, s.root, o); },
                  [&] { return m.reduce_init(in.data(), out.data(), s.n, op, s.root, o); });
    case CollectiveKind::allreduce:
      if (in_place)
        return pick([&] { return m.iallreduce(in, op, o); },
                    [&] { return m.allreduce_init(in, op, o); });
      return pick([&] { return m.iallreduce(in.data(), out.data(), s.n, op, o); },
                  [&] { return m.allreduce_init(in.data(), out.data(), s.n, op, o); });
    case CollectiveKind::reduce_scatter:
      if (in_place)
        return pick([&] { return m.ireduce_scatter(in, counts, op, o); },
                    [&] { return m.reduce_scatter_init(in, counts, op, o); });
      return pick([&] { return m.ireduce_scatter(in, out, counts, op, o); },
                  [&] { return m.reduce_scatter_init(in, out, counts, op, o); });
    case CollectiveKind::reduce_scatter_block:
      if (in_place)
        return pick([&] { return m.ireduce_scatter_block(in, s.n, op, o); },
                    [&] { return m.reduce_scatter_block_init(in, s.n, op, o); });
      return pick([&] { return m.ireduce_scatter_block(in, out, s.n, op, o); },
                  [&] { return m.reduce_scatter_block_init(in, out, s.n, op, o); });
    case CollectiveKind::scan:
      if (in_place)
        return pick([&] { return m.iscan(in, op, o); }, [&] { return m.scan_init(in, op, o); });
      return pick([&] { return m.iscan(in.data(), out.data(), s.n, op, o); },
                  [&] { return m.scan_init(in.data(), out.data(), s.n, op, o); });
    default:
      if (in_place)
        return pick([&] { return m.iexscan(in, op, o); }, [&] { return m.exscan_init(in, op, o); });
      return pick([&] { return m.iexscan(in.data(), out.data(), s.n, op, o); },
                  [&] { return m.exscan_init(in.data(), out.data(), s.n, op, o); });
  }
}

template <class C>
std::vector<typename C::T> input_of(const Shape& s, int p, int r) {
  std::vector<typename C::T> in(input_size(s, p));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = C::value(r, i);
  return in;
}

// Every member runs `rounds` rounds of the call (a persistent call is
// prepared once and started each round) and checks its output each time.
template <class C, bool kPersistent>
void check_call(Team& team, const Shape& s, bool in_place, int rounds = 1) {
  using T = typename C::T;
  const int p = team.size();
  const T untouched = C::value(99, 99);
  std::vector<std::string> failures(p);
  team.run([&](Member& m) {
    const int r = m.rank();
    const std::vector<std::size_t> counts = counts_for(s, p);
    std::vector<T> in = input_of<C>(s, p, r);
    std::vector<T> out(input_size(s, p), untouched);
    const auto op = C::op();
    auto request = issue<kPersistent>(m, s, in, out, in_place, op, counts);
    for (int round = 0; round < rounds; ++round) {
      if (round > 0) {
        const std::vector<T> fresh = input_of<C>(s, p, r);
        std::copy(fresh.begin(), fresh.end(), in.begin());  // the prepared call's buffer
        std::fill(out.begin(), out.end(), untouched);
      }
      if constexpr (kPersistent) request.start();
      if (round % 2 == 0) {
        request.wait();
      } else {
        while (!request.test()) {
        }
      }
      std::vector<T> got = in_place ? in : out;
      std::vector<T> want = expected<C>(s, p, r, untouched);
      if (in_place) {  // what the call does not write keeps the input
        for (std::size_t i = 0; i < want.size(); ++i) {
          if (want[i] == untouched) want[i] = in[i];
        }
        if (s.kind == CollectiveKind::reduce && r != s.root) want = input_of<C>(s, p, r);
        if (s.kind == CollectiveKind::exscan && r == 0) want = input_of<C>(s, p, r);
      }
      if (got != want && failures[r].empty()) {
        failures[r] = "member " + std::to_string(r) + " round " + std::to_string(round);
      }
    }
  });
  for (const std::string& f : failures) CHECK(f == "");
  CHECK(team.usable());
}

const CollectiveKind kKinds[] = {
    CollectiveKind::reduce,         CollectiveKind::allreduce,
    CollectiveKind::reduce_scatter, CollectiveKind::reduce_scatter_block,
    CollectiveKind::scan,           CollectiveKind::exscan};

template <class C>
void sweep() {
  for (int p : {2, 1, 5, 3}) {
    Team team = team_of(p);
    for (CollectiveKind kind : kKinds) {
      for (std::size_t n : {std::size_t{37}, std::size_t{1}, std::size_t{0}}) {
        for (bool in_place : {false, true}) {
          const Shape s{kind, n, p - 1};
          INFO("members " << p << ", " << detail::to_string(kind) << ", n " << n
                          << (in_place ? ", in place" : ""));
          check_call<C, false>(team, s, in_place);
          check_call<C, true>(team, s, in_place, 3);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("nonblocking and persistent calls give the oracle's result: sum", "[nonblocking]") {
  sweep<SumCase>();
}

TEST_CASE("nonblocking and persistent calls give the oracle's result: maxloc", "[nonblocking]") {
  sweep<MaxlocCase>();
}

TEST_CASE("nonblocking and persistent calls give the oracle's result: a non-commutative op",
          "[nonblocking]") {
  sweep<OrderedCase>();
}

TEST_CASE("several calls outstanding complete in any order", "[nonblocking]") {
  constexpr int kCalls = 24;  // more than the slots: starting waits for the oldest
  // Long calls go by chunks, short ones by the slot.
  const std::size_t kN = GENERATE(std::size_t{300}, std::size_t{2});
  Team team = team_of(3);
  std::vector<std::string> failures(team.size());
  team.run([&](Member& m) {
    std::vector<std::vector<double>> in(kCalls), out(kCalls);
    std::vector<Request> requests;
    for (int c = 0; c < 8; ++c) {
      in[c].assign(kN, m.rank() + c);
      out[c].assign(kN, -1);
      requests.push_back(m.iallreduce(in[c], out[c], op::sum, small_chunks()));
    }
    // Completed in reverse, by test() loops.
    for (int c = 7; c >= 0; --c) {
      while (!requests[c].test()) {
      }
      if (requests[c].pending()) failures[m.rank()] = "still pending";
      if (out[c] != std::vector<double>(kN, 3.0 * c + 3)) failures[m.rank()] = "reverse";
    }
    requests.clear();
    for (int c = 0; c < kCalls; ++c) {
      in[c].assign(kN, m.rank() * c);
      out[c].assign(kN, -1);
      requests.push_back(m.iscan(in[c], out[c], op::sum, small_chunks()));
    }
    for (int c = kCalls - 1; c >= 0; --c) requests[c].wait();
    for (int c = 0; c < kCalls; ++c) {
      const double want = c * (m.rank() * (m.rank() + 1) / 2.0);
      if (out[c] != std::vector<double>(kN, want)) failures[m.rank()] = "many";
    }
  });
  for (const std::string& f : failures) CHECK(f == "");
}

TEST_CASE("nonblocking results are bitwise those of the blocking sliced path", "[nonblocking]") {
  constexpr std::size_t kN = 20000;  // long: the blocking call goes sliced
  Team team = team_of(3);
  std::vector<int> differs(team.size(), 0);
  team.run([&](Member& m) {
    std::vector<float> in(kN), blocking(kN), nonblocking(kN);
    for (std::size_t i = 0; i < kN; ++i) in[i] = 1.0f / static_cast<float>(1 + i + 977 * m.rank());
    m.allreduce(in, blocking, op::sum);
    m.iallreduce(in, nonblocking, op::sum).wait();
    differs[m.rank()] += blocking != nonblocking;
    m.scan(in, blocking, op::sum);
    m.iscan(in, nonblocking, op::sum).wait();
    differs[m.rank()] += blocking != nonblocking;
    CollectiveOptions independent;
    independent.reproducibility = Reproducibility::shape_independent;
    m.allreduce(in.data(), blocking.data(), 5, op::sum, independent);
    auto p = m.allreduce_init(in.data(), nonblocking.data(), 5, op::sum, independent);
    p.start();
    p.wait();
    differs[m.rank()] += !std::equal(blocking.begin(), blocking.begin() + 5, nonblocking.begin());
  });
  for (int d : differs) CHECK(d == 0);
}

TEST_CASE("a mismatch or a bad argument fails the call on every member", "[nonblocking]") {
  Team team = team_of(3);
  std::vector<std::string> messages(team.size());
  team.run([&](Member& m) {
    std::vector<double> in(8, 1), out(8);
    const std::size_t n = m.rank() == 2 ? 4 : 8;
    Request r = m.iallreduce(in.data(), out.data(), n, op::sum);
    try {
      r.wait();
    } catch (const ArgumentError& e) {
      messages[m.rank()] = e.what();
    }
  });
  for (const std::string& text : messages) {
    CHECK(text.find("iallreduce") != std::string::npos);
    // The slots' words, or, with the progress threads (the blocking call
    // runs it), the blocking call's.
    CHECK((text.find("member 2 passes count 4 where member 0 passes 8") != std::string::npos ||
           text.find("the element count: member 0 has 8, member 2 has 4") != std::string::npos));
  }
  CHECK(team.usable());
  std::vector<std::string> seen(team.size());
  team.run([&](Member& m) {
    std::vector<int> in(4, 1), out(4);
    Request r = m.ireduce(in.data(), out.data(), 4, op::sum, 7);
    try {
      r.wait();
    } catch (const ArgumentError& e) {
      seen[m.rank()] = e.what();
    }
    r = m.ireduce(in.data(), out.data(), 4, op::sum, 1);  // usable: go on
    r.wait();
    if (m.rank() == 1 && out != std::vector<int>(4, 3)) seen[m.rank()] = "wrong result";
  });
  for (const std::string& text : seen) CHECK_THAT(text, Catch::Contains("root 7 is outside 0..2"));
}

// A loop of nonblocking calls takes the same request state back every
// time, and a call equal to that state's last skips its checks and
// signature: every change of an argument behind the same buffers must
// still be seen, alone or on one member only.
TEST_CASE("calls on the same buffers check what changed from the last call", "[nonblocking]") {
  Team team = team_of(3);
  std::vector<std::string> failures(team.size());
  team.run([&](Member& m) {
    std::string& failure = failures[m.rank()];
    std::vector<double> in(8), out(8);
    int round = 0;  // the inputs change from call to call, the buffers do not
    auto value = [&](int q, std::size_t i) { return (q + 1.0) * (i + 1) + round; };
    auto fill_inputs = [&] {
      ++round;
      for (std::size_t i = 0; i < 8; ++i) in[i] = value(m.rank(), i);
    };
    auto expect = [&](const char* what, std::size_t n, bool largest) {
      for (std::size_t i = 0; i < n; ++i) {
        double want = value(0, i);
        for (int q = 1; q < 3; ++q)
          want = largest ? std::max(want, value(q, i)) : want + value(q, i);
        if (out[i] != want) failure += std::string(what) + "; ";
      }
    };
    for (int call = 0; call < 4; ++call) {
      fill_inputs();
      m.iallreduce(in.data(), out.data(), 8, op::sum).wait();
      expect("sum", 8, false);
    }
    std::fill(out.begin(), out.end(), -1.0);
    m.iallreduce(in.data(), out.data(), 4, op::sum).wait();  // fewer elements
    expect("count 4", 4, false);
    if (out[4] != -1.0) failure += "wrote past count 4; ";
    m.iallreduce(in.data(), out.data(), 4, op::max).wait();  // another op
    expect("max", 4, true);
    for (int root = 0; root < 3; ++root) {  // the root moves
      std::fill(out.begin(), out.end(), -1.0);
      m.ireduce(in.data(), out.data(), 8, op::sum, root).wait();
      if (m.rank() == root) expect("reduce", 8, false);
      if (m.rank() != root && out[0] != -1.0) failure += "a non-root's output written; ";
    }
    for (int bad = 0; bad < 2; ++bad) {  // a bad root after good calls, twice
      try {
        m.ireduce(in.data(), out.data(), 8, op::sum, 7).wait();
        failure += "root 7 passed; ";
      } catch (const ArgumentError& e) {
        if (std::string(e.what()).find("root 7") == std::string::npos) failure += e.what();
      }
    }
    // One member alone changes its count after calls all agreed on.
    m.iallreduce(in.data(), out.data(), 8, op::sum).wait();
    m.iallreduce(in.data(), out.data(), 8, op::sum).wait();
    try {
      m.iallreduce(in.data(), out.data(), m.rank() == 1 ? 6 : 8, op::sum).wait();
      failure += "a count mismatch passed; ";
    } catch (const ArgumentError&) {
    }
    fill_inputs();
    m.iallreduce(in.data(), out.data(), 8, op::sum).wait();  // usable: go on
    expect("after the mismatch", 8, false);
  });
  for (const std::string& f : failures) CHECK(f == "");
  CHECK(team.usable());
}

TEST_CASE("a user op that throws makes every member throw OpError", "[nonblocking]") {
  Team team = team_of(2);
  const auto failing = make_op<int>([](const int& a, const int& b) -> int {
    if (a + b > 100) throw std::runtime_error("too big");
    return a + b;
  });
  std::vector<int> threw(team.size(), 0);
  team.run([&](Member& m) {
    std::vector<int> in(50, 80), out(50);
    Request r = m.iallreduce(in, out, failing, small_chunks());
    try {
      r.wait();
    } catch (const OpError&) {
      threw[m.rank()] = 1;
    }
  });
  CHECK(threw == std::vector<int>(team.size(), 1));
  CHECK(team.usable());
}

TEST_CASE("a member that never starts the call times the others out", "[nonblocking]") {
  TeamOptions options;
  options.members = 2;
  options.topology = Topology::synthetic("pack:1 core:2 pu:1");
  options.bind = false;
  options.timeout = std::chrono::milliseconds(100);
  Team team(options);
  team.run([&](Member& m) {
    if (m.rank() == 1) return;
    std::vector<double> in(4, 1), out(4);
    Request r = m.iallreduce(in, out, op::sum);
    CHECK_FALSE(r.test());
    CHECK_THROWS_AS(r.wait(), UnusableTeamError);
  });
  CHECK_FALSE(team.usable());
  team.resynchronize();
  CHECK(team.usable());
  check_call<SumCase, false>(team, {CollectiveKind::allreduce, 5}, false);
}

TEST_CASE("a request destroyed while pending waits for its call", "[nonblocking]") {
  Team team = team_of(2);
  std::vector<std::string> failures(team.size());
  team.run([&](Member& m) {
    std::string& failure = failures[m.rank()];
    std::vector<double> in(1000, 1), out(1000, 0);
    {
      Request r = m.iallreduce(in, out, op::sum, small_chunks());
      Request moved = std::move(r);  // the handle moves; the call does not notice
      if (r.pending() || !moved.pending()) failure += "moved; ";
    }
    if (out != std::vector<double>(1000, 2)) failure += "result; ";
    Request empty;
    try {
      empty.wait();
      failure += "empty; ";
    } catch (const ArgumentError&) {
    }
    auto p = m.allreduce_init(in, out, op::sum);
    if (!p.test()) failure += "not started; ";  // nothing to wait for
    p.start();
    try {
      p.start();
      failure += "restarted; ";
    } catch (const ArgumentError& e) {
      if (std::string(e.what()).find("still active") == std::string::npos) failure += e.what();
    }
    p.wait();
  });
  for (const std::string& f : failures) CHECK(f == "");
}

TEST_CASE("a request kept by a thread-local outlives its thread's spare request states",
          "[nonblocking]") {
  // The request is built before the member's first call, so its thread
  // destroys it after the spare states that call made (thread-locals go in
  // reverse order): its state must then be freed, not kept among spares
  // that are gone (ASan reports the leak).
  std::vector<double> outs(2, 0);
  {
    Team team = team_of(2);
    team.run([&](Member& m) {
      static thread_local Request kept;
      double in = m.rank() + 1;
      kept = m.iallreduce(&in, &outs[m.rank()], 1, op::sum);
      kept.wait();
    });
  }  // the workers end here
  CHECK(outs == std::vector<double>{3, 3});
}

namespace {

// What `top -H`, perf and debuggers show: the library's threads by name.
std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("the library's threads carry names", "[nonblocking]") {
  Team team = team_of(3);
  std::vector<std::string> names(team.size());
  team.run([&](Member& m) {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    names[m.rank()] = name;
    double in = 1, out = 0;
    m.iallreduce(&in, &out, 1, op::sum).wait();
  });
  CHECK(names == std::vector<std::string>{"hreduce m0", "hreduce m1", "hreduce m2"});
  // With the progress threads every member's calls have a queue and its
  // thread, which lives as long as the team.
  const std::vector<std::string> all = thread_names();
  const auto queues = std::count(all.begin(), all.end(), "hreduce queue");
  const char* progress = std::getenv("HREDUCE_PROGRESS_THREAD");
  CHECK(queues == (progress != nullptr && std::string(progress) == "1" ? team.size() : 0));
}
