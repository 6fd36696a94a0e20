// Determinism and message separation (implementation tests):
//  - allreduce of random doubles (where the order of combination changes the
//    bits) is bitwise identical on every participant and from run to run;
//    reduce, scan and reduce_scatter are identical run to run;
//  - every algorithm called back to back on one fabric, with no
//    synchronisation between them, never takes another's messages, and no
//    two algorithms share a tag.
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/schedule.hpp"
#include "tests/inter/every_algorithm.hpp"
#include "tests/inter/harness.hpp"

using namespace hreduce;
using namespace hreduce::test;
using detail::Channel;
using detail::ErasedOp;
using detail::InMemoryFabric;
using detail::Workspace;
namespace inter = hreduce::detail::inter;

namespace {

// Doubles over many magnitudes, both signs: sums of them round differently
// in every order.
std::vector<std::vector<double>> random_inputs(int P, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::vector<std::vector<double>> x(static_cast<std::size_t>(P), std::vector<double>(n));
  for (auto& row : x) {
    for (double& v : row) v = std::ldexp(mantissa(rng), exponent(rng));
  }
  return x;
}

using AllreduceFn = void (*)(Channel&, void*, std::size_t, const ErasedOp&, Workspace&);

// One allreduce of x on P participants; the buffers afterwards.
std::vector<std::vector<double>> run_allreduce(AllreduceFn fn,
                                               const std::vector<std::vector<double>>& x) {
  const int P = static_cast<int>(x.size());
  InMemoryFabric fabric(P);
  std::vector<std::vector<double>> buf = x;
  const ErasedOp op = DoubleSum::erased();
  run_participants(fabric, [&](Channel& channel, int r) {
    Workspace workspace;
    fn(channel, buf[r].data(), buf[r].size(), op, workspace);
  });
  return buf;
}

std::vector<int> determinism_counts() {
  if (quick()) return {3, 8, 13};
  return {3, 6, 8, 13, 16};
}

}  // namespace

TEST_CASE("allreduce of random doubles is bitwise identical everywhere and run to run",
          "[inter][allreduce][determinism]") {
  const int P = GENERATE(from_range(determinism_counts()));
  const std::size_t n = GENERATE(as<std::size_t>{}, 1, 7, 1000, 10007);
  const auto algorithm =
      GENERATE(std::make_pair("recursive_doubling_allreduce", &inter::recursive_doubling_allreduce),
               std::make_pair("rabenseifner_allreduce", &inter::rabenseifner_allreduce),
               std::make_pair("ring_allreduce", &inter::ring_allreduce));
  INFO(algorithm.first << ", P = " << P << ", n = " << n);
  const auto x = random_inputs(P, n, 1000003u * static_cast<std::uint64_t>(P) + n);

  const auto first = run_allreduce(algorithm.second, x);
  for (int r = 0; r < P; ++r) {
    INFO("participant " << r);
    REQUIRE(bitwise_equal(first[r], first[0]));
  }
  const int runs = quick() ? 2 : 4;
  for (int run = 1; run < runs; ++run) {
    INFO("run " << run);
    const auto again = run_allreduce(algorithm.second, x);
    for (int r = 0; r < P; ++r) REQUIRE(bitwise_equal(again[r], first[0]));
  }
  // And the bits are a sum: within P rounding errors of the exact one.
  for (std::size_t i = 0; i < n; ++i) {
    long double exact = 0;
    double magnitude = 0;
    for (int r = 0; r < P; ++r) {
      exact += x[r][i];
      magnitude += std::fabs(x[r][i]);
    }
    REQUIRE(std::fabs(static_cast<double>(first[0][i] - exact)) <= P * 0x1p-52 * magnitude);
  }
}

TEST_CASE("reduce, scan and reduce_scatter of random doubles are identical run to run",
          "[inter][determinism]") {
  const int P = GENERATE(from_range(determinism_counts()));
  const std::size_t n = GENERATE(as<std::size_t>{}, 7, 1000);
  INFO("P = " << P << ", n = " << n);
  const auto x = random_inputs(P, n * static_cast<std::size_t>(P), 77u + n);
  const std::vector<std::size_t> counts(static_cast<std::size_t>(P), n);
  const ErasedOp op = DoubleSum::erased();

  // Every participant's output of each collective, one run.
  auto run = [&] {
    std::vector<std::vector<std::vector<double>>> results(5);
    for (auto& per_collective : results) per_collective.resize(static_cast<std::size_t>(P));
    InMemoryFabric fabric(P);
    run_participants(fabric, [&](Channel& channel, int r) {
      Workspace workspace;
      std::vector<double> buf = x[r];
      inter::binomial_reduce(channel, buf.data(), buf.size(), op, P / 2, workspace);
      if (r == P / 2) results[0][r] = buf;
      std::vector<double>& scan = results[1][r];
      scan.resize(x[r].size());
      inter::hypercube_scan(channel, x[r].data(), scan.data(), scan.size(), op, false, workspace);
      std::vector<double>& exscan = results[2][r];
      exscan.resize(x[r].size());
      inter::hypercube_scan(channel, x[r].data(), exscan.data(), exscan.size(), op, true,
                            workspace);
      std::vector<double>& pairwise = results[3][r];
      pairwise.resize(n);
      inter::pairwise_reduce_scatter(channel, x[r].data(), pairwise.data(), counts.data(), op,
                                     workspace);
      std::vector<double>& reduce_scatter = results[4][r];
      reduce_scatter.resize(n);
      inter::reduce_then_scatter(channel, x[r].data(), reduce_scatter.data(), counts.data(), op,
                                 workspace);
    });
    return results;
  };
  const auto first = run();
  for (int again = 1; again < (quick() ? 2 : 4); ++again) {
    const auto next = run();
    for (std::size_t c = 0; c < first.size(); ++c) {
      for (int r = 0; r < P; ++r) {
        INFO("collective " << c << ", participant " << r << ", run " << again);
        REQUIRE(bitwise_equal(next[c][r], first[c][r]));
      }
    }
  }
}

TEST_CASE("algorithms called back to back on one fabric keep their messages apart",
          "[inter][tags]") {
  const int P = GENERATE(5, 1, 8, 13, 2, 16);
  const std::size_t n = GENERATE(as<std::size_t>{}, 0, 37, 1000);
  INFO("P = " << P << ", n = " << n);
  InMemoryFabric fabric(P);
  check_every_algorithm(fabric, n, quick() ? 2 : 3, [](int, int) {});
  REQUIRE(fabric.pending() == 0);
}

namespace {

// Passes everything through to another channel, noting the tags used.
class TagRecorder final : public Channel {
 public:
  explicit TagRecorder(Channel& inner) : inner_(inner) {}
  int size() const override { return inner_.size(); }
  int rank() const override { return inner_.rank(); }
  void send(int to, const void* data, std::size_t bytes, int tag) override {
    tags.insert(tag);
    inner_.send(to, data, bytes, tag);
  }
  void recv(int from, void* data, std::size_t bytes, int tag) override {
    tags.insert(tag);
    inner_.recv(from, data, bytes, tag);
  }
  void sendrecv(int to, const void* send_data, std::size_t send_bytes, int from, void* recv_data,
                std::size_t recv_bytes, int tag) override {
    tags.insert(tag);
    inner_.sendrecv(to, send_data, send_bytes, from, recv_data, recv_bytes, tag);
  }

  std::set<int> tags;

 private:
  Channel& inner_;
};

}  // namespace

TEST_CASE("each algorithm sends with tags of its own", "[inter][tags]") {
  // 6 is not a power of two, so the fold and unfold steps run too.
  const int P = GENERATE(6, 16);
  const std::size_t n = 10;
  const ErasedOp op = DoubleSum::erased();
  const std::vector<std::size_t> counts(static_cast<std::size_t>(P), n);
  const Schedule knomial = schedules::knomial(P, 3);
  using Run = std::function<void(Channel&, std::vector<double>&, Workspace&)>;
  const std::vector<std::pair<std::string, Run>> algorithms = {
      {"binomial_reduce",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::binomial_reduce(c, b.data(), n, op, 0, w);
         inter::binomial_reduce(c, b.data(), n, op, P - 1, w);
       }},
      {"binomial_broadcast",
       [&](Channel& c, std::vector<double>& b, Workspace&) {
         inter::binomial_broadcast(c, b.data(), n * sizeof(double), 1);
       }},
      {"recursive_doubling_allreduce",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::recursive_doubling_allreduce(c, b.data(), n, op, w);
       }},
      {"rabenseifner_allreduce",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::rabenseifner_allreduce(c, b.data(), n, op, w);
       }},
      {"ring_allreduce", [&](Channel& c, std::vector<double>& b,
                             Workspace& w) { inter::ring_allreduce(c, b.data(), n, op, w); }},
      {"hypercube_scan",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::hypercube_scan(c, b.data(), b.data(), n, op, false, w);
         inter::hypercube_scan(c, b.data(), b.data(), n, op, true, w);
       }},
      {"pairwise_reduce_scatter",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::pairwise_reduce_scatter(c, b.data(), b.data(), counts.data(), op, w);
       }},
      {"reduce_then_scatter",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::reduce_then_scatter(c, b.data(), b.data(), counts.data(), op, w);
       }},
      {"execute_schedule",
       [&](Channel& c, std::vector<double>& b, Workspace& w) {
         inter::execute_schedule(c, knomial, b.data(), n, op, w, detail::tags::first_free);
       }},
  };
  std::map<std::string, std::set<int>> used;
  for (const auto& [name, run] : algorithms) {
    InMemoryFabric fabric(P);
    std::vector<std::set<int>> per_participant(static_cast<std::size_t>(P));
    run_participants(fabric, [&](Channel& channel, int r) {
      TagRecorder recorder(channel);
      Workspace workspace;
      std::vector<double> buf(n * static_cast<std::size_t>(P), 1.0);
      run(recorder, buf, workspace);
      per_participant[r] = recorder.tags;
    });
    for (const auto& tags : per_participant) used[name].insert(tags.begin(), tags.end());
  }
  for (const auto& [name, tags] : used) {
    INFO(name << " uses " << tags.size() << " tags");
    REQUIRE_FALSE(tags.empty());
    REQUIRE(*tags.begin() >= 0);
    REQUIRE(*tags.rbegin() < 32767);  // the least MPI_TAG_UB
    for (const auto& [other, other_tags] : used) {
      if (other == name) continue;
      for (int tag : tags) {
        INFO("tag " << tag << " is also used by " << other);
        REQUIRE(other_tags.count(tag) == 0);
      }
    }
  }
  CHECK(used["execute_schedule"] == std::set<int>{detail::tags::first_free});
}
