// The comparison library behind `hreduce bench`: every implementation
// (hreduce, openmp_reduction, openmp_sliced, tbb, limit) on every collective
// it has, checked against a sequential oracle written here (not only against
// Problem::first_wrong_member); the runners leave the caller's CPU affinity
// alone; measure_case's records; summarize's quantiles.
//
// Not tagged "sanitize": OpenMP's runtime confuses TSan.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/compare/comparison.hpp"
#include "src/compare/problem.hpp"
#include "src/compare/runner.hpp"
#include "src/compare/sampling.hpp"

using hreduce::detail::compare::Case;
using hreduce::detail::compare::CaseResult;
using hreduce::detail::compare::Collective;
using hreduce::detail::compare::Element;
using hreduce::detail::compare::Implementation;
using hreduce::detail::compare::implements;
using hreduce::detail::compare::kCollectives;
using hreduce::detail::compare::kImplementations;
using hreduce::detail::compare::make_runner;
using hreduce::detail::compare::measure_case;
using hreduce::detail::compare::MinLoc;
using hreduce::detail::compare::name_of;
using hreduce::detail::compare::Problem;
using hreduce::detail::compare::Record;
using hreduce::detail::compare::Runner;
using hreduce::detail::compare::SamplingOptions;
using hreduce::detail::compare::summarize;
using hreduce::detail::compare::Summary;

namespace {

bool quick() {
  const char* v = std::getenv("HREDUCE_TEST_QUICK");
  return v != nullptr && *v != '\0' && *v != '0';
}

hreduce::Team make_team(int members) {
  hreduce::TeamOptions o;
  o.members = members;
  return hreduce::Team(o);
}

std::vector<int> member_counts() {
  if (quick()) return {1, 3, 5};
  return {1, 2, 3, 4, 5};
}

std::vector<std::size_t> element_counts() {
  if (quick()) return {1, 7, 1000, 4099};
  return {1, 7, 64, 1000, 4099, 100003};
}

// reduce_scatter_block needs a multiple of the members, as comparison.cpp
// makes it; here rounded up.
std::size_t count_for(Collective c, int members, std::size_t n) {
  if (c != Collective::reduce_scatter_block) return n;
  return (n + members - 1) / members * members;
}

// --- The test's own oracle: a plain loop, with its own combine ---------------

double own_combine(double a, double b) { return a + b; }
std::int32_t own_combine(std::int32_t a, std::int32_t b) { return a + b; }
MinLoc own_combine(MinLoc a, MinLoc b) {
  if (a.value < b.value) return a;
  if (b.value < a.value) return b;
  return a.index <= b.index ? a : b;
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same(std::int32_t a, std::int32_t b) { return a == b; }
bool same(MinLoc a, MinLoc b) { return same(a.value, b.value) && a.index == b.index; }

std::string show(double v) { return std::to_string(v); }
std::string show(std::int32_t v) { return std::to_string(v); }
std::string show(MinLoc v) {
  return "{" + std::to_string(v.value) + ", " + std::to_string(v.index) + "}";
}

// prefix[m][i] = value(0, i) ∘ … ∘ value(m, i), folded in rank order.
template <class T>
std::vector<std::vector<T>> rank_prefixes(int members, std::size_t n) {
  std::vector<std::vector<T>> prefix(members, std::vector<T>(n));
  for (std::size_t i = 0; i < n; ++i) prefix[0][i] = Element<T>::value(0, i);
  for (int m = 1; m < members; ++m) {
    for (std::size_t i = 0; i < n; ++i)
      prefix[m][i] = own_combine(prefix[m - 1][i], Element<T>::value(m, i));
  }
  return prefix;
}

// The bytes of an element a collective writes: MinLoc's padding is not
// part of its value, so it is skipped.
template <class T>
constexpr std::size_t value_bytes() {
  if constexpr (std::is_same_v<T, MinLoc>) return offsetof(MinLoc, index) + sizeof(int);
  return sizeof(T);
}

// No input byte holds kSentinel (checked: inputs_free_of_sentinel), and no
// oracle value is all sentinel bytes, so a sentinel left in a defined
// output means it was never written.
constexpr unsigned char kSentinel = 0xA5;

template <class T>
void fill_sentinel(Problem<T>& p) {
  for (auto& o : p.out) {
    if (!o.empty()) std::memset(static_cast<void*>(o.data()), kSentinel, o.size() * sizeof(T));
  }
}

// Over the first `bytes` bytes of x: its value (value_bytes) or, for the
// limit's byte copies, all of it.
template <class T>
bool has_sentinel_byte(const T& x, std::size_t bytes = value_bytes<T>()) {
  const auto* b = reinterpret_cast<const unsigned char*>(&x);
  for (std::size_t k = 0; k < bytes; ++k) {
    if (b[k] == kSentinel) return true;
  }
  return false;
}

template <class T>
bool all_sentinel(const T& x, std::size_t bytes = value_bytes<T>()) {
  const auto* b = reinterpret_cast<const unsigned char*>(&x);
  for (std::size_t k = 0; k < bytes; ++k) {
    if (b[k] != kSentinel) return false;
  }
  return true;
}

// The limit copies raw bytes, padding included, and not element-aligned
// (its shares are byte ranges), so an output element's value bytes may come
// from an input's padding. Padding is whatever the assignment left there (a
// register's leftovers, possibly the sentinel), so the test zeroes it; the
// values stay as they are.
template <class T>
void zero_input_padding(Problem<T>& p) {
  if constexpr (value_bytes<T>() < sizeof(T)) {
    for (auto& v : p.in) {
      for (T& x : v) {
        std::memset(reinterpret_cast<unsigned char*>(&x) + value_bytes<T>(), 0,
                    sizeof(T) - value_bytes<T>());
      }
    }
  }
}

// Empty when every defined output equals the oracle's value, every undefined
// output (reduce's non-roots, exscan's member 0) still holds the sentinel
// (when `undefined_sentinel`), and the inputs are unchanged.
template <class T>
std::string check_against_oracle(const Problem<T>& p, const std::vector<std::vector<T>>& prefix,
                                 bool undefined_sentinel) {
  std::ostringstream problem;
  for (int m = 0; m < p.members; ++m) {
    for (std::size_t i = 0; i < p.count; ++i) {
      if (!same(p.in[m][i], Element<T>::value(m, i))) {
        problem << "input of member " << m << " changed at " << i;
        return problem.str();
      }
    }
  }
  const int last = p.members - 1;
  for (int m = 0; m < p.members; ++m) {
    const bool defined = (p.collective != Collective::reduce || m == Problem<T>::root) &&
                         (p.collective != Collective::exscan || m > 0);
    const std::size_t out_count =
        p.collective == Collective::reduce_scatter_block ? p.count / p.members : p.count;
    if (p.out[m].size() != out_count) {
      problem << "member " << m << " output has " << p.out[m].size() << " elements, want "
              << out_count;
      return problem.str();
    }
    for (std::size_t i = 0; i < out_count; ++i) {
      const T& got = p.out[m][i];
      if (!defined) {
        if (undefined_sentinel && !all_sentinel(got)) {
          problem << "member " << m << " has no defined output but element " << i << " was written";
          return problem.str();
        }
        continue;
      }
      T want{};
      switch (p.collective) {
        case Collective::reduce:
        case Collective::allreduce: want = prefix[last][i]; break;
        case Collective::reduce_scatter_block: want = prefix[last][m * out_count + i]; break;
        case Collective::scan: want = prefix[m][i]; break;
        case Collective::exscan: want = prefix[m - 1][i]; break;
        case Collective::reduce_scatter: break;  // not compared (kCollectives)
      }
      if (!same(got, want)) {
        problem << "member " << m << " element " << i << ": got " << show(got) << ", want "
                << show(want);
        return problem.str();
      }
    }
  }
  return "";
}

// The limit computes nothing: every defined output must be written (no
// sentinel byte left), and undefined ones not touched.
template <class T>
std::string check_limit_coverage(const Problem<T>& p) {
  std::ostringstream problem;
  for (int m = 0; m < p.members; ++m) {
    for (std::size_t i = 0; i < p.out[m].size(); ++i) {
      if (p.has_output(m) && has_sentinel_byte(p.out[m][i], sizeof(T))) {
        problem << "member " << m << " element " << i << " was not written";
        return problem.str();
      }
      if (!p.has_output(m) && !all_sentinel(p.out[m][i], sizeof(T))) {
        problem << "member " << m << " has no defined output but element " << i << " was written";
        return problem.str();
      }
    }
  }
  return "";
}

// The sentinel argument above holds only if no input byte (padding
// included, once zeroed) is the sentinel.
template <class T>
bool inputs_free_of_sentinel(const Problem<T>& p) {
  for (const auto& v : p.in) {
    for (const T& x : v) {
      if (has_sentinel_byte(x, sizeof(T))) return false;
    }
  }
  return true;
}

}  // namespace

// The checks above must notice what they are for: a wrong value, a missed
// output, a stray write, a changed input.
TEST_CASE("the test's own oracle checks notice wrong, missing and stray outputs",
          "[compare][oracle]") {
  const int members = 3;
  const std::size_t n = 7;
  const auto prefix = rank_prefixes<MinLoc>(members, n);
  {
    Problem<MinLoc> p(Collective::scan, members, n);
    for (int m = 0; m < members; ++m) p.out[m] = prefix[m];
    CHECK(check_against_oracle(p, prefix, true).empty());
    CHECK(p.first_wrong_member() == -1);
    p.out[2][6].index += 1;
    CHECK_THAT(check_against_oracle(p, prefix, true), Catch::Contains("member 2 element 6"));
    CHECK(p.first_wrong_member() == 2);
  }
  {
    Problem<double> p(Collective::reduce, members, n);
    const auto sums = rank_prefixes<double>(members, n);
    fill_sentinel(p);
    p.out[0] = sums[members - 1];
    CHECK(check_against_oracle(p, sums, true).empty());
    p.out[1][3] = 0;  // a non-root's output is not the collective's to write
    CHECK_THAT(check_against_oracle(p, sums, true), Catch::Contains("no defined output"));
    CHECK(check_against_oracle(p, sums, false).empty());
    p.in[2][4] += 1;
    CHECK_THAT(check_against_oracle(p, sums, false), Catch::Contains("input of member 2"));
  }
  {
    Problem<std::int32_t> p(Collective::exscan, members, n);
    REQUIRE(inputs_free_of_sentinel(p));
    fill_sentinel(p);
    CHECK_THAT(check_limit_coverage(p), Catch::Contains("member 1 element 0 was not written"));
    for (int m = 1; m < members; ++m) p.out[m] = p.in[m];
    CHECK(check_limit_coverage(p).empty());
    reinterpret_cast<unsigned char*>(&p.out[2][5])[3] = kSentinel;  // one byte missed
    CHECK_THAT(check_limit_coverage(p), Catch::Contains("member 2 element 5"));
  }
}

TEMPLATE_TEST_CASE("every runner gives the oracle's result, twice in a row", "[compare][runners]",
                   double, std::int32_t, MinLoc) {
  using T = TestType;
  int checked = 0, limit_checked = 0;
  for (int members : member_counts()) {
    hreduce::Team team = make_team(members);
    REQUIRE(team.local_size() == members);
    for (std::size_t n0 : element_counts()) {
      for (Collective c : kCollectives) {
        const std::size_t n = count_for(c, members, n0);
        Problem<T> problem(c, members, n);
        zero_input_padding(problem);
        REQUIRE(inputs_free_of_sentinel(problem));
        const auto prefix = rank_prefixes<T>(members, n);
        for (Implementation impl : kImplementations) {
          if (!implements(impl, c)) continue;
          INFO(Element<T>::type << " " << name_of(c) << " by " << name_of(impl) << ", " << members
                                << " members, " << n << " elements");
          auto runner = make_runner(impl, team, problem);
          REQUIRE(runner != nullptr);
          if (impl == Implementation::limit) {
            fill_sentinel(problem);
            CHECK(runner->seconds_for(1) > 0);
            const std::string once = check_limit_coverage(problem);
            if (!once.empty()) FAIL_CHECK("after one call: " << once);
            fill_sentinel(problem);
            CHECK(runner->seconds_for(3) > 0);
            const std::string thrice = check_limit_coverage(problem);
            if (!thrice.empty()) FAIL_CHECK("after three calls: " << thrice);
            ++limit_checked;
            continue;
          }
          // One call on cleared outputs, as measure_case does.
          problem.clear_outputs();
          const double once_seconds = runner->seconds_for(1);
          CHECK(once_seconds > 0);
          CHECK(problem.first_wrong_member() == -1);
          const std::string once = check_against_oracle(problem, prefix, false);
          if (!once.empty()) FAIL_CHECK("after one call: " << once);
          // Three back-to-back calls in one batch, on outputs that hold a
          // sentinel no result can equal, so nothing left over passes.
          fill_sentinel(problem);
          const double thrice_seconds = runner->seconds_for(3);
          CHECK(thrice_seconds > 0);
          CHECK(problem.first_wrong_member() == -1);
          const std::string thrice = check_against_oracle(problem, prefix, true);
          if (!thrice.empty()) FAIL_CHECK("after three calls: " << thrice);
          ++checked;
        }
      }
    }
  }
  // 5 collectives by hreduce, openmp_sliced and tbb, 2 by openmp_reduction.
  const int cases = static_cast<int>(member_counts().size() * element_counts().size());
  CHECK(checked == cases * (3 * 5 + 2));
  CHECK(limit_checked == cases * 5);
}

TEST_CASE("openmp_reduction has reduce and allreduce only; the others have all",
          "[compare][runners]") {
  for (Collective c : kCollectives) {
    INFO(name_of(c));
    const bool array_section = c == Collective::reduce || c == Collective::allreduce;
    CHECK(implements(Implementation::openmp_reduction, c) == array_section);
    CHECK(implements(Implementation::hreduce, c));
    CHECK(implements(Implementation::openmp_sliced, c));
    CHECK(implements(Implementation::tbb, c));
    CHECK(implements(Implementation::limit, c));
  }
  CHECK(name_of(Implementation::openmp_reduction) == "openmp_reduction");
  CHECK(name_of(Collective::reduce_scatter_block) == "reduce_scatter_block");
}

TEST_CASE("runners leave the calling thread's CPU affinity as it was",
          "[compare][runners][affinity]") {
  cpu_set_t before;
  CPU_ZERO(&before);
  REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0);
  if (CPU_COUNT(&before) < 2) {
    WARN("the test process may run on one CPU only: pinning cannot narrow it, the check is weak");
  }
  const int members = GENERATE(1, 2, 3);
  hreduce::Team team = make_team(members);
  // Pinning happens only when the topology is this machine.
  REQUIRE(team.topology().is_this_system());
  const Collective c = GENERATE(Collective::allreduce, Collective::scan);
  Problem<double> problem(c, members, 4099);
  for (Implementation impl : kImplementations) {
    if (!implements(impl, c)) continue;
    INFO(name_of(impl) << " " << name_of(c) << ", " << members << " members");
    auto runner = make_runner(impl, team, problem);
    for (int calls : {1, 3}) {
      CHECK(runner->seconds_for(calls) > 0);
      cpu_set_t after;
      CPU_ZERO(&after);
      REQUIRE(pthread_getaffinity_np(pthread_self(), sizeof after, &after) == 0);
      CHECK(CPU_EQUAL(&before, &after));
      CHECK(CPU_COUNT(&after) == CPU_COUNT(&before));
      cpu_set_t via_sched;
      CPU_ZERO(&via_sched);
      REQUIRE(sched_getaffinity(0, sizeof via_sched, &via_sched) == 0);
      CHECK(CPU_EQUAL(&before, &via_sched));
    }
  }
}

namespace {

SamplingOptions tiny_sampling() {
  SamplingOptions s;
  s.min_seconds = 0;
  s.min_samples = 3;
  s.max_samples = 3;
  s.sample_seconds = 1e-5;
  s.settle_seconds = 0;
  return s;
}

std::vector<Implementation> all_implementations() {
  return {std::begin(kImplementations), std::end(kImplementations)};
}

std::size_t element_size(const std::string& type) {
  if (type == "int32") return sizeof(std::int32_t);
  if (type == "double_int") return sizeof(MinLoc);
  return sizeof(double);
}

}  // namespace

TEST_CASE("measure_case gives one filled record per implementation, hreduce first",
          "[compare][measure]") {
  const int members = GENERATE(2, 3);
  hreduce::Team team = make_team(members);
  const std::string type = GENERATE(as<std::string>{}, "double", "int32", "double_int");
  const Collective c =
      GENERATE(Collective::reduce, Collective::allreduce, Collective::reduce_scatter_block,
               Collective::scan, Collective::exscan);
  const std::size_t bytes = GENERATE(as<std::size_t>{}, 8, 1000);
  INFO(name_of(c) << " " << type << " " << bytes << " B, " << members << " members");

  Case k;
  k.collective = c;
  k.type = type;
  k.bytes_per_member = bytes;
  const CaseResult result = measure_case(team, k, all_implementations(), tiny_sampling());
  CHECK(result.wrong.empty());

  std::vector<std::string> want_order;
  for (Implementation impl : kImplementations) {
    if (implements(impl, c)) want_order.emplace_back(name_of(impl));
  }
  REQUIRE(result.records.size() == want_order.size());
  REQUIRE(result.records.front().implementation == "hreduce");

  // The element count as the test derives it: whole elements, at least one,
  // rounded down to a multiple of the members for reduce_scatter_block.
  const std::size_t size = element_size(type);
  std::size_t n = std::max<std::size_t>(1, bytes / size);
  if (c == Collective::reduce_scatter_block) n = std::max<std::size_t>(1, n / members) * members;
  const double p = members;
  double moved = 0;  // input + defined output bytes of the whole team
  switch (c) {
    case Collective::reduce: moved = (p * n + n) * size; break;
    case Collective::allreduce: moved = (p * n + p * n) * size; break;
    case Collective::reduce_scatter_block: moved = (p * n + n) * size; break;
    case Collective::scan: moved = (p * n + p * n) * size; break;
    case Collective::exscan: moved = (p * n + (p - 1) * n) * size; break;
    case Collective::reduce_scatter: break;  // not compared (kCollectives)
  }

  for (std::size_t i = 0; i < result.records.size(); ++i) {
    const Record& r = result.records[i];
    INFO("record " << i << ": " << r.implementation);
    CHECK(r.implementation == want_order[i]);
    CHECK(r.collective == name_of(c));
    CHECK(r.type == type);
    CHECK(r.op == (type == "double_int" ? "minloc" : "sum"));
    CHECK(r.members == members);
    CHECK(r.bytes_per_member == n * size);
    CHECK(r.median_seconds > 0);
    CHECK(r.gbps > 0);
    CHECK(r.samples == 3);
    CHECK(r.spread >= 0);
    CHECK(r.gbps == Approx(moved / r.median_seconds / 1e9).epsilon(1e-9));
  }
}

TEST_CASE("measure_case refuses an unknown element type, naming it", "[compare][measure]") {
  hreduce::Team team = make_team(2);
  Case k;
  k.collective = Collective::allreduce;
  k.type = "float";
  k.bytes_per_member = 64;
  std::string message;
  try {
    measure_case(team, k, all_implementations(), tiny_sampling());
  } catch (const hreduce::Error& e) {
    message = e.what();
  }
  REQUIRE(!message.empty());
  CHECK_THAT(message, Catch::Contains("'float'"));
  CHECK_NOTHROW(hreduce::detail::compare::check_type("double_int"));
  CHECK_THROWS_AS(hreduce::detail::compare::check_type("complex"), hreduce::Error);
}

TEST_CASE("measure_case adds hreduce at each level after plain hreduce, exact on double only",
          "[compare][measure][reproducibility]") {
  using hreduce::Reproducibility;
  hreduce::Team team = make_team(3);
  const std::string type = GENERATE(as<std::string>{}, "double", "int32", "double_int");
  const Collective c = GENERATE(Collective::allreduce, Collective::scan);
  INFO(name_of(c) << " " << type);

  Case k;
  k.collective = c;
  k.type = type;
  k.bytes_per_member = 1000;
  // run_to_run is plain hreduce: it adds nothing.
  const std::vector<Reproducibility> levels = {
      Reproducibility::run_to_run, Reproducibility::shape_independent, Reproducibility::exact};
  const CaseResult result = measure_case(team, k, {Implementation::hreduce, Implementation::limit},
                                         tiny_sampling(), levels);
  CHECK(result.wrong.empty());

  std::vector<std::string> want = {"hreduce", "hreduce[shape_independent]"};
  if (type == "double") {
    want.push_back("hreduce[exact]");
    CHECK(result.skipped.empty());
  } else {
    REQUIRE(result.skipped.size() == 1);
    CHECK_THAT(result.skipped.front(), Catch::StartsWith("hreduce[exact]: "));
    CHECK_THAT(result.skipped.front(), Catch::Contains(type));
  }
  want.push_back("limit");
  REQUIRE(result.records.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Record& r = result.records[i];
    INFO("record " << i);
    CHECK(r.implementation == want[i]);
    CHECK(r.type == type);
    CHECK(r.bytes_per_member == result.records.front().bytes_per_member);
    CHECK(r.median_seconds > 0);
    CHECK(r.samples == 3);
  }
}

TEST_CASE("hreduce_at_level_name names the level in brackets", "[compare][reproducibility]") {
  using hreduce::Reproducibility;
  using hreduce::detail::compare::hreduce_at_level_name;
  CHECK(hreduce_at_level_name(Reproducibility::exact) == "hreduce[exact]");
  CHECK(hreduce_at_level_name(Reproducibility::shape_independent) == "hreduce[shape_independent]");
}

TEST_CASE("summarize gives the median and quartiles of unsorted samples", "[compare][sampling]") {
  SECTION("odd count") {
    const Summary s = summarize({5.0, 1.0, 3.0});
    CHECK(s.samples == 3);
    CHECK(s.median == Approx(3.0));
    CHECK(s.p25 == Approx(2.0));
    CHECK(s.p75 == Approx(4.0));
    CHECK(s.spread() == Approx((4.0 - 2.0) / 3.0));
  }
  SECTION("odd count, five") {
    const Summary s = summarize({9.0, 2.0, 7.0, 4.0, 1.0});
    CHECK(s.samples == 5);
    CHECK(s.median == Approx(4.0));
    CHECK(s.p25 == Approx(2.0));
    CHECK(s.p75 == Approx(7.0));
    CHECK(s.spread() == Approx(5.0 / 4.0));
  }
  SECTION("even count") {
    const Summary s = summarize({4.0, 1.0, 3.0, 2.0});
    CHECK(s.samples == 4);
    CHECK(s.median == Approx(2.5));
    CHECK(s.p25 == Approx(1.75));
    CHECK(s.p75 == Approx(3.25));
    CHECK(s.spread() == Approx(1.5 / 2.5));
  }
  SECTION("one sample") {
    const Summary s = summarize({0.125});
    CHECK(s.samples == 1);
    CHECK(s.median == 0.125);
    CHECK(s.p25 == 0.125);
    CHECK(s.p75 == 0.125);
    CHECK(s.spread() == 0);
  }
  SECTION("equal samples") {
    const Summary s = summarize({2e-6, 2e-6, 2e-6, 2e-6});
    CHECK(s.median == 2e-6);
    CHECK(s.spread() == 0);
  }
  SECTION("empty") {
    const Summary s = summarize({});
    CHECK(s.samples == 0);
    CHECK(s.median == 0);
    CHECK(s.p25 == 0);
    CHECK(s.p75 == 0);
    CHECK(s.spread() == 0);
  }
}
