// Conformance: every predefined op on every element type its row accepts,
// through combine (all aliasing cases) and reduce_local, against an oracle
// written here from docs/spec.md's definitions without calling the op.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>

#include <catch2/catch.hpp>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"
#include "test_support.hpp"

namespace {

using namespace hreduce_test;
namespace op = hreduce::op;

// Integer results modulo 2^bits: do the arithmetic in 64-bit unsigned and
// keep the low bits (the conversion to T is modular in C++20).
template <class T>
unsigned long long bits(T x) {
  return static_cast<unsigned long long>(x);
}

template <class T>
bool is_true(T x) {
  return x != T{};
}

const auto oracle_max = [](auto x, auto y) { return x > y ? x : y; };
const auto oracle_min = [](auto x, auto y) { return y < x ? y : x; };
const auto oracle_sum = [](auto x, auto y) {
  using T = decltype(x);
  if constexpr (hreduce::is_integer_v<T>) {
    return static_cast<T>(bits(x) + bits(y));
  } else if constexpr (hreduce::is_complex_v<T>) {
    return T(x.real() + y.real(), x.imag() + y.imag());
  } else {
    return x + y;
  }
};
const auto oracle_prod = [](auto x, auto y) {
  using T = decltype(x);
  if constexpr (hreduce::is_integer_v<T>) {
    return static_cast<T>(bits(x) * bits(y));
  } else if constexpr (hreduce::is_complex_v<T>) {
    return T(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
  } else {
    return x * y;
  }
};
const auto oracle_land = [](auto x, auto y) {
  return static_cast<decltype(x)>(is_true(x) && is_true(y));
};
const auto oracle_lor = [](auto x, auto y) {
  return static_cast<decltype(x)>(is_true(x) || is_true(y));
};
const auto oracle_lxor = [](auto x, auto y) {
  return static_cast<decltype(x)>(is_true(x) ? !is_true(y) : is_true(y));
};

template <class T, class F>
T bitwise(T x, T y, F f) {
  if constexpr (std::is_same_v<T, std::byte>) {
    return static_cast<std::byte>(f(std::to_integer<unsigned>(x), std::to_integer<unsigned>(y)));
  } else {
    return static_cast<T>(f(bits(x), bits(y)));
  }
}
const auto oracle_band = [](auto x, auto y) {
  return bitwise(x, y, [](auto p, auto q) { return p & q; });
};
const auto oracle_bor = [](auto x, auto y) {
  return bitwise(x, y, [](auto p, auto q) { return p | q; });
};
const auto oracle_bxor = [](auto x, auto y) {
  return bitwise(x, y, [](auto p, auto q) { return p ^ q; });
};
const auto oracle_maxloc = [](auto x, auto y) {
  using T = decltype(x);
  if (x.value == y.value) return T{x.value, std::min(x.index, y.index)};
  return x.value > y.value ? x : y;
};
const auto oracle_minloc = [](auto x, auto y) {
  using T = decltype(x);
  if (x.value == y.value) return T{x.value, std::min(x.index, y.index)};
  return x.value < y.value ? x : y;
};

const auto kOpsWithOracles =
    std::make_tuple(std::pair{op::max, oracle_max}, std::pair{op::min, oracle_min},
                    std::pair{op::sum, oracle_sum}, std::pair{op::prod, oracle_prod},
                    std::pair{op::land, oracle_land}, std::pair{op::lor, oracle_lor},
                    std::pair{op::lxor, oracle_lxor}, std::pair{op::band, oracle_band},
                    std::pair{op::bor, oracle_bor}, std::pair{op::bxor, oracle_bxor},
                    std::pair{op::maxloc, oracle_maxloc}, std::pair{op::minloc, oracle_minloc});

template <class T, class Op, class Oracle>
void check_op_against_oracle(Op o, Oracle oracle, std::size_t n) {
  INFO("op " << Op::name << ", n = " << n);
  const Buffer<T> a = random_buffer<T>(n, 1000 + n);
  const Buffer<T> b = random_buffer<T>(n, 2000 + n);

  Buffer<T> want(n);
  Buffer<T> want_same(n);  // a ∘ a, for out == a == b
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = oracle(a[i], b[i]);
    want_same[i] = oracle(a[i], a[i]);
  }

  Buffer<T> out(n);
  hreduce::combine(a.data(), b.data(), out.data(), n, o);
  CHECK(first_mismatch(out, want) == kNoMismatch);

  Buffer<T> left = a;  // accumulate on the left operand
  hreduce::combine(left.data(), b.data(), left.data(), n, o);
  CHECK(first_mismatch(left, want) == kNoMismatch);

  Buffer<T> right = b;  // accumulate on the right operand
  hreduce::combine(a.data(), right.data(), right.data(), n, o);
  CHECK(first_mismatch(right, want) == kNoMismatch);

  Buffer<T> same = a;
  hreduce::combine(same.data(), same.data(), same.data(), n, o);
  CHECK(first_mismatch(same, want_same) == kNoMismatch);

  Buffer<T> inout = b;
  hreduce::reduce_local(a.data(), inout.data(), n, o);
  CHECK(first_mismatch(inout, want) == kNoMismatch);
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("every predefined op accepting T agrees with a plain loop",
                        "[ops][conformance]", AllElementTypes) {
  const std::size_t n = GENERATE(as<std::size_t>{}, 0, 1, 7, 100, 1000, 100003);
  int ops_applied = 0;
  std::apply(
      [&](const auto&... op_and_oracle) {
        auto one = [&](const auto& p) {
          using Op = std::remove_cvref_t<decltype(p.first)>;
          if constexpr (Op::template accepts<TestType>) {
            ++ops_applied;
            check_op_against_oracle<TestType>(p.first, p.second, n);
          }
        };
        (one(op_and_oracle), ...);
      },
      kOpsWithOracles);
  // Rows per category (docs/spec.md): integers 10 ops (all but maxloc/minloc),
  // floating 4, complex 2, bool 3, std::byte 3, pairs 2.
  using T = TestType;
  const int expected = hreduce::is_integer_v<T>       ? 10
                       : hreduce::is_floating_v<T>    ? 4
                       : hreduce::is_complex_v<T>     ? 2
                       : hreduce::is_value_index_v<T> ? 2
                                                      : 3;
  CHECK(ops_applied == expected);
}
