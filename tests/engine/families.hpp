// Element types × ops the engine tests sweep, each with inputs whose exact
// result does not depend on the order of combination (small integers, exact
// binary fractions), so a sequential loop is an exact oracle for every
// algorithm. Order-sensitive behaviour is tested separately with a
// non-commutative op, whose oracle is the rank-ordered product itself.
#pragma once

#include <complex>
#include <cstdint>
#include <string>

#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"

namespace hreduce::test {

// An affine map x -> a·x + b over integers mod 2^64. (f ∘ g)(x) = g(f(x)):
// composition is associative and not commutative.
struct Affine {
  std::uint64_t a, b;
  friend bool operator==(const Affine&, const Affine&) = default;
};

inline Affine compose(const Affine& f, const Affine& g) { return {f.a * g.a, f.b * g.a + g.b}; }

inline const auto affine_op = make_op<Affine>(
    [](const Affine& f, const Affine& g) { return compose(f, g); }, Commutativity::non_commutative);

// Same op in MPI_User_function form, for the vector-form path.
inline const auto affine_vector_op = make_op<Affine>(
    [](const Affine* in, Affine* inout, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) inout[i] = compose(in[i], inout[i]);
    },
    Commutativity::non_commutative);

// A family: a type, an op, and the inputs x_m[i].
template <class T, class Op, class Gen>
struct Family {
  using value_type = T;
  std::string name;
  Op op;
  Gen gen;  // T gen(int member, std::size_t i)

  T input(int member, std::size_t i) const { return gen(member, i); }
};

template <class T, class Op, class Gen>
Family<T, Op, Gen> family(std::string name, Op op, Gen gen) {
  return {std::move(name), op, gen};
}

inline long small(int m, std::size_t i, long modulus) {
  return static_cast<long>((static_cast<std::size_t>(m) * 31 + i * 17 + 5) % modulus);
}

inline double quarter(int m, std::size_t i) {  // exact in any order
  return static_cast<double>(small(m, i, 17) - 8) * 0.25;
}

inline double unit_factor(int m, std::size_t i) {  // ±1, ±2, ±0.5: exact products
  static constexpr double f[] = {1.0, -1.0, 2.0, 0.5, -2.0, 1.0, -0.5};
  return f[small(m, i, 7)];
}

// Calls fn(family) for every family of the sweep (docs/spec.md's op families over
// int32, int64, uint8, float, double, complex<double>, a MINLOC pair and a
// user struct).
template <class Fn>
void for_each_family(Fn&& fn) {
  fn(family<std::int32_t>("int32 sum", op::sum, [](int m, std::size_t i) {
    return static_cast<std::int32_t>(small(m, i, 1000) * 2147483 + m);  // wraps
  }));
  fn(family<std::int32_t>("int32 prod", op::prod, [](int m, std::size_t i) {
    return static_cast<std::int32_t>(small(m, i, 5) - 2);
  }));
  fn(family<std::int32_t>("int32 max", op::max, [](int m, std::size_t i) {
    return static_cast<std::int32_t>(small(m, i, 101) - 50);
  }));
  fn(family<std::int32_t>("int32 band", op::band, [](int m, std::size_t i) {
    return static_cast<std::int32_t>(~(1u << (small(m, i, 32))));
  }));
  fn(family<std::int32_t>("int32 lxor", op::lxor, [](int m, std::size_t i) {
    return static_cast<std::int32_t>(small(m, i, 3));
  }));
  fn(family<std::int64_t>("int64 sum", op::sum, [](int m, std::size_t i) {
    return static_cast<std::int64_t>(small(m, i, 1000)) * 9007199254740993LL;  // wraps
  }));
  fn(family<std::int64_t>("int64 min", op::min, [](int m, std::size_t i) {
    return static_cast<std::int64_t>(small(m, i, 999)) - 400;
  }));
  fn(family<std::uint8_t>("uint8 sum", op::sum, [](int m, std::size_t i) {
    return static_cast<std::uint8_t>(small(m, i, 256));
  }));
  fn(family<std::uint8_t>("uint8 bor", op::bor, [](int m, std::size_t i) {
    return static_cast<std::uint8_t>(1u << small(m, i, 8));
  }));
  fn(family<std::uint8_t>("uint8 land", op::land, [](int m, std::size_t i) {
    return static_cast<std::uint8_t>(small(m, i, 9));
  }));
  fn(family<float>("float sum", op::sum,
                   [](int m, std::size_t i) { return static_cast<float>(quarter(m, i)); }));
  fn(family<float>("float max", op::max,
                   [](int m, std::size_t i) { return static_cast<float>(quarter(m, i)); }));
  fn(family<double>("double sum", op::sum, quarter));
  fn(family<double>("double prod", op::prod, unit_factor));
  fn(family<double>("double min", op::min, quarter));
  fn(family<std::complex<double>>("complex<double> sum", op::sum, [](int m, std::size_t i) {
    return std::complex<double>(quarter(m, i), quarter(m + 3, i));
  }));
  fn(family<std::complex<double>>("complex<double> prod", op::prod, [](int m, std::size_t i) {
    static const std::complex<double> f[] = {{1, 1}, {0, 1}, {1, 0}, {1, -1}, {0, -1}};
    return f[small(m, i, 5)];
  }));
  fn(family<double_int>("double_int minloc", op::minloc, [](int m, std::size_t i) {
    return double_int{static_cast<double>(small(m, i, 4)), m};  // many ties
  }));
  fn(family<long_int>("long_int maxloc", op::maxloc, [](int m, std::size_t i) {
    return long_int{small(m, i, 4), m};
  }));
  fn(family<Affine>("user Affine (non-commutative)", affine_op, [](int m, std::size_t i) {
    return Affine{static_cast<std::uint64_t>(small(m, i, 1000)) * 2 + 1,
                  static_cast<std::uint64_t>(small(m + 1, i, 1000))};
  }));
  fn(family<Affine>("user Affine vector form", affine_vector_op, [](int m, std::size_t i) {
    return Affine{static_cast<std::uint64_t>(small(m, i, 77)) * 2 + 3,
                  static_cast<std::uint64_t>(m)};
  }));
}

}  // namespace hreduce::test
