// Conformance: user-defined ops. The non-commutative 2x2 matrix product
// (integers mod 2^64, so every result is exact and comparable bit for bit)
// shows that combine keeps `a` as the left operand in every aliasing case and
// in both function forms; the complex product is docs/spec.md's example.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"
#include "test_support.hpp"

namespace {

using hreduce::Commutativity;
using hreduce_test::first_mismatch;
using hreduce_test::kNoMismatch;

struct Mat2 {
  std::uint64_t m00, m01, m10, m11;
  friend bool operator==(const Mat2&, const Mat2&) = default;
};

Mat2 mul(const Mat2& a, const Mat2& b) {
  return {a.m00 * b.m00 + a.m01 * b.m10, a.m00 * b.m01 + a.m01 * b.m11,
          a.m10 * b.m00 + a.m11 * b.m10, a.m10 * b.m01 + a.m11 * b.m11};
}

std::vector<Mat2> random_mats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Mat2> v(n);
  for (Mat2& m : v) m = {rng(), rng(), rng(), rng()};
  return v;
}

const auto mat_elementwise =
    hreduce::make_op<Mat2>([](const Mat2& a, const Mat2& b) { return mul(a, b); },
                           Commutativity::non_commutative, Mat2{1, 0, 0, 1});

const auto mat_vector = hreduce::make_op<Mat2>(
    [](const Mat2* in, Mat2* inout, std::size_t len) {
      for (std::size_t i = 0; i < len; ++i) inout[i] = mul(in[i], inout[i]);
    },
    Commutativity::non_commutative);

static_assert(!decltype(mat_elementwise)::vector_form && decltype(mat_vector)::vector_form);
static_assert(hreduce::ReductionOp<decltype(mat_elementwise), Mat2>);
static_assert(hreduce::ReductionOp<decltype(mat_vector), Mat2>);
static_assert(!hreduce::ReductionOp<decltype(mat_vector), std::uint64_t>);

template <class Op>
void check_matrix_product(const Op& op, std::size_t n) {
  INFO("n = " << n);
  const std::vector<Mat2> a = random_mats(n, 7 + n);
  const std::vector<Mat2> b = random_mats(n, 11 + n);
  std::vector<Mat2> ab(n), ba(n), aa(n);
  for (std::size_t i = 0; i < n; ++i) {
    ab[i] = mul(a[i], b[i]);
    ba[i] = mul(b[i], a[i]);
    aa[i] = mul(a[i], a[i]);
  }
  // The check would be blind if the data happened to commute.
  if (n > 0) REQUIRE(first_mismatch(ab, ba) != kNoMismatch);

  SECTION("out distinct") {
    std::vector<Mat2> out(n);
    hreduce::combine(a.data(), b.data(), out.data(), n, op);
    CHECK(first_mismatch(out, ab) == kNoMismatch);
  }
  SECTION("out == a") {
    std::vector<Mat2> out = a;
    hreduce::combine(out.data(), b.data(), out.data(), n, op);
    CHECK(first_mismatch(out, ab) == kNoMismatch);
  }
  SECTION("out == b") {
    std::vector<Mat2> out = b;
    hreduce::combine(a.data(), out.data(), out.data(), n, op);
    CHECK(first_mismatch(out, ab) == kNoMismatch);
  }
  SECTION("out == a == b") {
    std::vector<Mat2> out = a;
    hreduce::combine(out.data(), out.data(), out.data(), n, op);
    CHECK(first_mismatch(out, aa) == kNoMismatch);
  }
  SECTION("reduce_local: inout = in * inout") {
    std::vector<Mat2> inout = b;
    hreduce::reduce_local<Mat2>(a, inout, op);
    CHECK(first_mismatch(inout, ab) == kNoMismatch);
  }
}

}  // namespace

TEST_CASE("non-commutative user op keeps the lower-ranked operand on the left",
          "[ops][user][conformance]") {
  const std::size_t n = GENERATE(as<std::size_t>{}, 0, 1, 7, 100, 1000, 100003);
  SECTION("elementwise form") { check_matrix_product(mat_elementwise, n); }
  SECTION("vector form") { check_matrix_product(mat_vector, n); }
}

// A team of 9 members folded left to right (accumulating on the left operand)
// and right to left (accumulating on the right): only the bracketing differs,
// so a correct rank-ordered combine gives bit-identical results.
TEST_CASE("rank-ordered folds agree bit for bit for a non-commutative op",
          "[ops][user][conformance]") {
  constexpr int kMembers = 9;
  constexpr std::size_t n = 300;  // more than one stack chunk of Mat2
  std::vector<std::vector<Mat2>> x;
  for (int r = 0; r < kMembers; ++r) x.push_back(random_mats(n, 100 + r));

  std::vector<Mat2> expected = x[0];
  for (int r = 1; r < kMembers; ++r)
    for (std::size_t i = 0; i < n; ++i) expected[i] = mul(expected[i], x[r][i]);

  auto fold = [&](const auto& op) {
    std::vector<Mat2> left = x[0];
    for (int r = 1; r < kMembers; ++r)
      hreduce::combine(left.data(), x[r].data(), left.data(), n, op);
    std::vector<Mat2> right = x[kMembers - 1];
    for (int r = kMembers - 2; r >= 0; --r) hreduce::reduce_local(x[r].data(), right.data(), n, op);
    CHECK(first_mismatch(left, expected) == kNoMismatch);
    CHECK(first_mismatch(right, expected) == kNoMismatch);
  };
  fold(mat_elementwise);
  fold(mat_vector);
}

namespace {

struct Cx {
  double re, im;
};

Cx cx_mul(const Cx& a, const Cx& b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

}  // namespace

TEST_CASE("complex product user op agrees with std::complex multiplication",
          "[ops][user][conformance]") {
  const auto elementwise = hreduce::make_op<Cx>(cx_mul);  // a function pointer works too
  const auto vector = hreduce::make_op<Cx>([](const Cx* in, Cx* inout, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) inout[i] = cx_mul(in[i], inout[i]);
  });
  static_assert(std::is_same_v<decltype(elementwise)::function_type, Cx (*)(const Cx&, const Cx&)>);
  CHECK(elementwise.commutative());
  CHECK(hreduce::is_commutative(vector));

  SECTION("one step, small integers: exact") {
    std::mt19937_64 rng(5);
    constexpr std::size_t n = 1000;
    std::vector<Cx> a(n), b(n), out1(n), out2(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = {double(int(rng() % 201) - 100), double(int(rng() % 201) - 100)};
      b[i] = {double(int(rng() % 201) - 100), double(int(rng() % 201) - 100)};
    }
    hreduce::combine(a.data(), b.data(), out1.data(), n, elementwise);
    out2 = b;
    hreduce::combine(a.data(), out2.data(), out2.data(), n, vector);
    for (std::size_t i = 0; i < n; ++i) {
      const std::complex<double> want =
          std::complex<double>(a[i].re, a[i].im) * std::complex<double>(b[i].re, b[i].im);
      INFO("i = " << i);
      CHECK(out1[i].re == want.real());
      CHECK(out1[i].im == want.imag());
      CHECK(out2[i].re == want.real());
      CHECK(out2[i].im == want.imag());
    }
  }

  SECTION("SPEC example: 100 complex numbers per member, 16 members") {
    constexpr int kMembers = 16;
    constexpr std::size_t n = 100;
    std::mt19937_64 rng(6);
    std::uniform_real_distribution<double> angle(-3.14159, 3.14159);
    std::uniform_real_distribution<double> radius(0.9, 1.1);
    std::vector<std::vector<Cx>> x(kMembers, std::vector<Cx>(n));
    std::vector<std::complex<double>> want(n, std::complex<double>(1.0, 0.0));
    for (auto& member : x) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto z = std::polar(radius(rng), angle(rng));
        member[i] = {z.real(), z.imag()};
        want[i] *= z;
      }
    }
    // Right to left through reduce_local (out == b), left to right through
    // combine accumulating on the left (out == a, the vector form's chunked path).
    std::vector<Cx> right = x[kMembers - 1];
    for (int r = kMembers - 2; r >= 0; --r)
      hreduce::reduce_local(x[r].data(), right.data(), n, elementwise);
    std::vector<Cx> left = x[0];
    for (int r = 1; r < kMembers; ++r)
      hreduce::combine(left.data(), x[r].data(), left.data(), n, vector);
    for (std::size_t i = 0; i < n; ++i) {
      INFO("i = " << i);
      // Rounding differs from the left-to-right std::complex product.
      CHECK(right[i].re == Approx(want[i].real()).margin(1e-12).epsilon(1e-12));
      CHECK(right[i].im == Approx(want[i].imag()).margin(1e-12).epsilon(1e-12));
      CHECK(left[i].re == Approx(want[i].real()).margin(1e-12).epsilon(1e-12));
      CHECK(left[i].im == Approx(want[i].imag()).margin(1e-12).epsilon(1e-12));
    }
  }
}

TEST_CASE("user op accessors", "[ops][user][interface]") {
  CHECK_FALSE(mat_elementwise.commutative());
  CHECK_FALSE(hreduce::is_commutative(mat_vector));
  REQUIRE(mat_elementwise.identity().has_value());
  CHECK(*mat_elementwise.identity() == Mat2{1, 0, 0, 1});
  CHECK_FALSE(mat_vector.identity().has_value());
  CHECK(mat_vector.name() == "user op");
  CHECK(hreduce::op_name(mat_vector) == "user op");
  CHECK(hreduce::op_name(mat_vector.named("matrix product")) == "matrix product");
  CHECK(hreduce::op_name(hreduce::op::bor) == "bor");

  // The single-element call goes through the same function.
  const Mat2 p{1, 2, 3, 4}, q{5, 6, 7, 8};
  CHECK(mat_elementwise(p, q) == mul(p, q));
  CHECK(mat_vector(p, q) == mul(p, q));

  // The identity really is one.
  const Mat2 e = *mat_elementwise.identity();
  CHECK(mat_elementwise(e, p) == p);
  CHECK(mat_elementwise(p, e) == p);

  const auto with_int_identity = hreduce::make_op<int>(
      [](const int& a, const int& b) { return a + b; }, Commutativity::commutative, 0);
  CHECK(with_int_identity.identity() == std::optional<int>(0));
}

TEST_CASE("an exception thrown by a user op propagates", "[ops][user][negative]") {
  struct Boom : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  const auto elementwise = hreduce::make_op<int>([](const int& a, const int& b) {
    if (a == 13) throw Boom("unlucky element");
    return a + b;
  });
  const auto vector = hreduce::make_op<int>([](const int* in, int* inout, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) {
      if (in[i] == 13) throw Boom("unlucky vector");
      inout[i] += in[i];
    }
  });
  std::vector<int> a(5000, 1), b(5000, 2);
  a[4321] = 13;
  const auto out_is_a = [&](const auto& op) {
    std::vector<int> out = a;
    hreduce::combine(out.data(), b.data(), out.data(), out.size(), op);
  };
  CHECK_THROWS_AS(hreduce::reduce_local(a.data(), b.data(), a.size(), elementwise), Boom);
  CHECK_THROWS_WITH(hreduce::reduce_local(a.data(), b.data(), a.size(), vector), "unlucky vector");
  CHECK_THROWS_WITH(out_is_a(elementwise), "unlucky element");
  CHECK_THROWS_WITH(out_is_a(vector), "unlucky vector");  // through the chunked path
}
