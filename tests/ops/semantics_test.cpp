// Conformance: the corner cases docs/spec.md pins down — integer wrap-around,
// NaN and infinity under max/min, logical ops on arbitrary nonzero values,
// bitwise ops on bytes, and MAXLOC/MINLOC tie-breaking. Each is checked on a
// single element and on a long vector, because the vectorized loop body and
// the scalar remainder are different code.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"
#include "test_support.hpp"

namespace {

namespace op = hreduce::op;

constexpr std::size_t kLong = 1003;  // several vector iterations plus a remainder

// x ∘ y applied to every element of two long vectors; also checks that all
// elements agree, so a wrong vectorized lane shows up.
template <class T, class Op>
T combine_long(T x, T y, Op o) {
  hreduce_test::Buffer<T> a(kLong, x), b(kLong, y);
  hreduce::reduce_local(a.data(), b.data(), kLong, o);
  for (std::size_t i = 1; i < kLong; ++i) {
    if (!(b[i] == b[0]) && !(b[i] != b[i] && b[0] != b[0])) {
      FAIL("element " << i << " differs from element 0");
    }
  }
  return b[0];
}

template <class T>
constexpr T lim_max = std::numeric_limits<T>::max();
template <class T>
constexpr T lim_min = std::numeric_limits<T>::min();

}  // namespace

TEST_CASE("integer sum wraps around modulo 2^bits", "[ops][sum][conformance]") {
  CHECK(op::sum(std::int8_t{127}, std::int8_t{1}) == std::int8_t{-128});
  CHECK(combine_long(std::int8_t{127}, std::int8_t{1}, op::sum) == std::int8_t{-128});
  CHECK(op::sum(std::uint8_t{200}, std::uint8_t{100}) == std::uint8_t{44});
  CHECK(combine_long(std::uint8_t{200}, std::uint8_t{100}, op::sum) == std::uint8_t{44});
  CHECK(op::sum(std::int16_t{-32768}, std::int16_t{-1}) == std::int16_t{32767});
  CHECK(combine_long(std::int16_t{-32768}, std::int16_t{-1}, op::sum) == std::int16_t{32767});
  CHECK(combine_long(lim_max<std::int32_t>, 1, op::sum) == lim_min<std::int32_t>);
  CHECK(combine_long(lim_max<std::int64_t>, std::int64_t{1}, op::sum) == lim_min<std::int64_t>);
  CHECK(combine_long(lim_max<long long>, 1LL, op::sum) == lim_min<long long>);
  CHECK(combine_long(lim_max<std::uint64_t>, std::uint64_t{1}, op::sum) == 0u);
  CHECK(combine_long(lim_min<std::int64_t>, std::int64_t{-1}, op::sum) == lim_max<std::int64_t>);
  // Never saturating (some MPI builds clamp 8-bit sums to 127).
  CHECK(combine_long(std::int8_t{100}, std::int8_t{100}, op::sum) == std::int8_t{-56});
}

TEST_CASE("integer prod wraps around modulo 2^bits", "[ops][prod][conformance]") {
  CHECK(combine_long(std::int8_t{16}, std::int8_t{16}, op::prod) == std::int8_t{0});
  CHECK(combine_long(std::int8_t{-128}, std::int8_t{-1}, op::prod) == std::int8_t{-128});
  CHECK(combine_long(std::uint8_t{200}, std::uint8_t{3}, op::prod) == std::uint8_t{88});
  // unsigned short promotes to int: 65535 * 65535 would overflow int, which
  // ubsan reports if the implementation multiplies in the promoted type.
  CHECK(combine_long(std::uint16_t{65535}, std::uint16_t{65535}, op::prod) == std::uint16_t{1});
  CHECK(combine_long(std::int16_t{-32768}, std::int16_t{-32768}, op::prod) == std::int16_t{0});
  CHECK(combine_long(65536, 65536, op::prod) == 0);
  CHECK(combine_long(lim_min<std::int32_t>, -1, op::prod) == lim_min<std::int32_t>);
  CHECK(combine_long(lim_min<std::int64_t>, std::int64_t{-1}, op::prod) == lim_min<std::int64_t>);
  CHECK(combine_long(lim_max<std::uint64_t>, lim_max<std::uint64_t>, op::prod) == 1u);
  CHECK(combine_long(std::int64_t{1} << 32, std::int64_t{1} << 32, op::prod) == 0);
}

// Documented behaviour (ops.hpp): NaN in either operand gives NaN; infinities
// order normally; -0.0 and +0.0 are equal and either may come back.
TEMPLATE_TEST_CASE("floating max/min propagate NaN and order infinities", "[ops][max][min]", float,
                   double, long double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const T one = 1;

  for (bool scalar : {true, false}) {
    CAPTURE(scalar);
    auto max = [&](T x, T y) { return scalar ? op::max(x, y) : combine_long(x, y, op::max); };
    auto min = [&](T x, T y) { return scalar ? op::min(x, y) : combine_long(x, y, op::min); };
    CHECK(std::isnan(max(nan, one)));
    CHECK(std::isnan(max(one, nan)));
    CHECK(std::isnan(min(nan, one)));
    CHECK(std::isnan(min(one, nan)));
    CHECK(std::isnan(max(nan, nan)));
    CHECK(std::isnan(max(nan, inf)));
    CHECK(std::isnan(max(-inf, nan)));
    CHECK(std::isnan(min(nan, -inf)));
    CHECK(std::isnan(min(inf, nan)));

    CHECK(max(inf, one) == inf);
    CHECK(max(one, inf) == inf);
    CHECK(max(-inf, one) == one);
    CHECK(min(-inf, one) == -inf);
    CHECK(min(one, inf) == one);
    CHECK(max(-inf, inf) == inf);
    CHECK(min(-inf, inf) == -inf);

    CHECK(max(T(-0.0), T(0.0)) == T(0));
    CHECK(min(T(0.0), T(-0.0)) == T(0));
  }
}

TEMPLATE_TEST_CASE("NaN lanes propagate through a long max/min combine", "[ops][max][min]", float,
                   double, long double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::size_t n = GENERATE(as<std::size_t>{}, 1, 7, 100, 1000);
  std::mt19937_64 rng(n);
  std::vector<T> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(static_cast<int>(rng() % 200) - 100);
    b[i] = static_cast<T>(static_cast<int>(rng() % 200) - 100);
    if (i % 5 == 1) a[i] = nan;
    if (i % 7 == 2) b[i] = nan;
  }
  std::vector<T> mx = b, mn = b;
  hreduce::reduce_local(a.data(), mx.data(), n, op::max);
  hreduce::reduce_local(a.data(), mn.data(), n, op::min);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("i = " << i);
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      CHECK(std::isnan(mx[i]));
      CHECK(std::isnan(mn[i]));
    } else {
      CHECK(mx[i] == std::max(a[i], b[i]));
      CHECK(mn[i] == std::min(a[i], b[i]));
    }
  }
}

TEMPLATE_TEST_CASE("logical ops treat any nonzero as true and return 0 or 1", "[ops][logical]",
                   signed char, unsigned char, short, unsigned, long long, unsigned long long) {
  using T = TestType;
  const T big = static_cast<T>(std::numeric_limits<T>::max() - 1);  // even: a bit test fails
  const T high = static_cast<T>(std::numeric_limits<T>::min() == 0
                                    ? T(std::numeric_limits<T>::max() / 2 + 1)
                                    : std::numeric_limits<T>::min());  // only the top bit
  for (T x : {T(2), big, high}) {
    for (T y : {T(4), T(6), high}) {
      CAPTURE(+x, +y);
      CHECK(combine_long(x, y, op::land) == T(1));
      CHECK(combine_long(x, y, op::lor) == T(1));
      CHECK(combine_long(x, y, op::lxor) == T(0));
      CHECK(combine_long(x, T(0), op::land) == T(0));
      CHECK(combine_long(T(0), y, op::lor) == T(1));
      CHECK(combine_long(T(0), y, op::lxor) == T(1));
      CHECK(combine_long(x, T(0), op::lxor) == T(1));
    }
  }
  CHECK(combine_long(T(0), T(0), op::lor) == T(0));
  CHECK(combine_long(T(0), T(0), op::lxor) == T(0));
}

TEST_CASE("logical ops on bool", "[ops][logical]") {
  for (bool x : {false, true}) {
    for (bool y : {false, true}) {
      CAPTURE(x, y);
      CHECK(combine_long(x, y, op::land) == (x && y));
      CHECK(combine_long(x, y, op::lor) == (x || y));
      CHECK(combine_long(x, y, op::lxor) == (x != y));
    }
  }
}

TEST_CASE("bitwise ops on std::byte and unsigned char", "[ops][bitwise]") {
  const std::byte x{0xF0}, y{0x3C};
  CHECK(combine_long(x, y, op::band) == std::byte{0x30});
  CHECK(combine_long(x, y, op::bor) == std::byte{0xFC});
  CHECK(combine_long(x, y, op::bxor) == std::byte{0xCC});
  CHECK(combine_long(std::byte{0xFF}, std::byte{0xFF}, op::bxor) == std::byte{0});
  const unsigned char u = 0xF0, v = 0x3C;
  CHECK(combine_long(u, v, op::band) == 0x30);
  CHECK(combine_long(u, v, op::bor) == 0xFC);
  CHECK(combine_long(u, v, op::bxor) == 0xCC);
  // Signed: the sign bit is just a bit.
  CHECK(combine_long(std::int8_t{-1}, std::int8_t{0x0F}, op::band) == std::int8_t{0x0F});
  CHECK(combine_long(std::int8_t{-128}, std::int8_t{1}, op::bor) == std::int8_t{-127});
}

TEMPLATE_TEST_CASE("maxloc/minloc: larger/smaller value wins, ties go to the lowest index",
                   "[ops][maxloc][minloc][conformance]", hreduce::double_int, hreduce::float_int64,
                   hreduce::int_int, hreduce::long_double_int, hreduce::short_int64,
                   hreduce::long_int) {
  using T = TestType;
  using V = typename T::value_type;
  using I = typename T::index_type;
  const T lo{V(4), I(0)}, hi{V(5), I(9)};
  // Strict winner, whatever the indices and the argument order.
  CHECK(op::maxloc(lo, hi) == hi);
  CHECK(op::maxloc(hi, lo) == hi);
  CHECK(op::minloc(lo, hi) == lo);
  CHECK(op::minloc(hi, lo) == lo);
  // Ties, both argument orders.
  const T tie_a{V(5), I(3)}, tie_b{V(5), I(1)};
  CHECK(op::maxloc(tie_a, tie_b) == T{V(5), I(1)});
  CHECK(op::maxloc(tie_b, tie_a) == T{V(5), I(1)});
  CHECK(op::minloc(tie_a, tie_b) == T{V(5), I(1)});
  CHECK(op::minloc(tie_b, tie_a) == T{V(5), I(1)});
  CHECK(combine_long(tie_a, tie_b, op::maxloc) == T{V(5), I(1)});
  CHECK(combine_long(tie_b, tie_a, op::minloc) == T{V(5), I(1)});

  // Commutative and associative on a small exhaustive domain.
  std::vector<T> domain;
  for (int v = 0; v < 3; ++v)
    for (int i = 0; i < 3; ++i) domain.push_back(T{V(v), I(i)});
  for (const T& x : domain)
    for (const T& y : domain) {
      CHECK(op::maxloc(x, y) == op::maxloc(y, x));
      CHECK(op::minloc(x, y) == op::minloc(y, x));
      for (const T& z : domain) {
        CHECK(op::maxloc(op::maxloc(x, y), z) == op::maxloc(x, op::maxloc(y, z)));
        CHECK(op::minloc(op::minloc(x, y), z) == op::minloc(x, op::minloc(y, z)));
      }
    }
}

// docs/spec.md's typical use: each member finds its local minimum and position,
// encodes index = rank * LEN + position, the team reduces with MINLOC, and the
// result decodes to the lowest rank holding the global minimum. The team is
// simulated: its members' pairs are folded with reduce_local in rank order and
// in reverse (MINLOC is commutative, so both must agree).
TEST_CASE("global minimum with rank*LEN+pos encoding", "[ops][minloc][conformance]") {
  constexpr int kRanks = 7;
  constexpr std::int64_t kLen = 1000;
  std::mt19937_64 rng(42);
  std::vector<std::vector<double>> data(kRanks, std::vector<double>(kLen));
  for (auto& member : data)
    for (double& x : member) x = static_cast<double>(rng() % 100000) / 7.0 + 1.0;
  // The global minimum, planted on ranks 5 and 2 (twice on 2) and nowhere else.
  data[5][3] = -1.5;
  data[2][900] = -1.5;
  data[2][901] = -1.5;

  std::vector<hreduce::double_int64> local(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    std::int64_t pos = 0;
    for (std::int64_t i = 1; i < kLen; ++i)
      if (data[r][i] < data[r][pos]) pos = i;
    local[r] = {data[r][pos], r * kLen + pos};
  }

  hreduce::double_int64 forward = local[0];
  for (int r = 1; r < kRanks; ++r) {
    hreduce::double_int64 acc = local[r];
    hreduce::reduce_local(&forward, &acc, 1, op::minloc);  // forward holds ranks < r
    forward = acc;
  }
  hreduce::double_int64 backward = local[kRanks - 1];
  for (int r = kRanks - 2; r >= 0; --r) {
    hreduce::reduce_local(&local[r], &backward, 1, op::minloc);
  }

  CHECK(forward == backward);
  CHECK(forward.value == -1.5);
  CHECK(forward.index / kLen == 2);
  CHECK(forward.index % kLen == 900);

  // The same through MAXLOC on the negated values.
  std::vector<hreduce::double_int64> negated(local);
  for (auto& p : negated) p.value = -p.value;
  std::vector<hreduce::double_int64> acc(1, negated[kRanks - 1]);
  for (int r = kRanks - 2; r >= 0; --r)
    hreduce::reduce_local(&negated[r], acc.data(), 1, op::maxloc);
  CHECK(acc[0] == hreduce::double_int64{1.5, 2 * kLen + 900});
}
