// Shared pieces of the inter-process algorithm tests: participants as
// threads over a fabric, element families with sequential oracles, and the
// sweeps over participant counts and sizes.
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/ops.hpp"
#include "hreduce/team.hpp"
#include "src/inter/inter.hpp"
#include "src/transport/in_memory_channel.hpp"

namespace hreduce::test {

// Sanitizer runs set HREDUCE_TEST_QUICK=1: fewer participant counts and
// smaller vectors.
inline bool quick() {
  const char* v = std::getenv("HREDUCE_TEST_QUICK");
  return v != nullptr && *v != '\0' && *v != '0';
}

// Participant counts, deliberately not in increasing order.
inline std::vector<int> participant_counts() {
  if (quick()) return {5, 1, 16, 3, 8, 2, 13};
  return {5, 1, 16, 3, 8, 2, 13, 4, 7};
}

inline std::vector<std::size_t> element_counts() {
  if (quick()) return {0, 1, 7, 100, 1003};
  return {0, 1, 7, 100, 1000, 10007};
}

// Runs body(channel, rank) on one thread per participant of `fabric`, then
// rethrows the exception of the lowest-ranked participant that threw, if any.
// Catch2's assertions are not thread-safe: bodies record, the caller checks.
template <class Fabric, class Body>
void run_participants(Fabric& fabric, Body body) {
  const int P = fabric.size();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(P));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(fabric.endpoint(r), r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// --- element families: an op and its independent oracle ------------------------

// Doubles that are multiples of 1/4 below 16: every sum of up to thousands
// of them is exact, so the order of combination cannot show.
struct DoubleSum {
  using T = double;
  static constexpr const char* name = "double sum";
  static constexpr bool commutative = true;
  static T input(int r, std::size_t i) {
    return static_cast<double>((static_cast<std::size_t>(r) * 37 + i * 11) % 64) * 0.25;
  }
  static T oracle(const T& a, const T& b) { return a + b; }
  static detail::ErasedOp erased() { return detail::erase_op<double>(op::sum); }
};

// Values near INT32_MAX, so sums wrap around.
struct Int32Sum {
  using T = std::int32_t;
  static constexpr const char* name = "int32 sum";
  static constexpr bool commutative = true;
  static T input(int r, std::size_t i) {
    // Conversion to a signed type is modular since C++20.
    return static_cast<std::int32_t>(0x7ff00000u + static_cast<std::uint32_t>(r) * 0x12345u +
                                     static_cast<std::uint32_t>(i) * 977u);
  }
  static T oracle(const T& a, const T& b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  }
  static detail::ErasedOp erased() { return detail::erase_op<std::int32_t>(op::sum); }
};

// Affine maps x -> a·x + b over the integers mod 2^64, composed left to
// right: (a, b) ∘ (c, d) = (a·c, b·c + d). Associative, not commutative, so
// any combine out of rank order changes the result.
struct Affine {
  std::uint64_t a, b;
  friend bool operator==(const Affine&, const Affine&) = default;
};

inline Affine compose(const Affine& x, const Affine& y) { return {x.a * y.a, x.b * y.a + y.b}; }

inline const auto affine_op = make_op<Affine>(
    [](const Affine& x, const Affine& y) { return compose(x, y); }, Commutativity::non_commutative);

struct AffineCompose {
  using T = Affine;
  static constexpr const char* name = "affine composition";
  static constexpr bool commutative = false;
  static T input(int r, std::size_t i) {
    const std::uint64_t s =
        0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(r) * 1000003u + i + 1);
    return {(s ^ (s >> 29)) | 1, s * 0xBF58476D1CE4E5B9ull + static_cast<std::uint64_t>(r)};
  }
  static T oracle(const T& a, const T& b) { return compose(a, b); }
  static detail::ErasedOp erased() { return detail::erase_op<Affine>(affine_op); }
};

// Inputs and rank-ordered prefixes of one family for P participants.
template <class Fam>
struct Data {
  using T = typename Fam::T;
  std::vector<std::vector<T>> x;       // x[r], n elements each
  std::vector<std::vector<T>> prefix;  // prefix[r] = x_0 ∘ … ∘ x_r

  Data(int P, std::size_t n) : x(static_cast<std::size_t>(P), std::vector<T>(n)) {
    for (int r = 0; r < P; ++r) {
      for (std::size_t i = 0; i < n; ++i) x[r][i] = Fam::input(r, i);
    }
    prefix = x;
    for (int r = 1; r < P; ++r) {
      for (std::size_t i = 0; i < n; ++i) prefix[r][i] = Fam::oracle(prefix[r - 1][i], x[r][i]);
    }
  }
  const std::vector<T>& total() const { return prefix.back(); }
};

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// reduce_scatter block sizes summing to about n: equal blocks, or uneven ones
// with some zero blocks.
inline std::vector<std::size_t> block_counts(int P, std::size_t n, bool uneven) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(P));
  const std::size_t base = n / static_cast<std::size_t>(P);
  for (int r = 0; r < P; ++r) {
    counts[r] = !uneven      ? base + (n % static_cast<std::size_t>(P) != 0 ? 1 : 0)
                : r % 3 == 1 ? 0
                             : base + static_cast<std::size_t>(r % 2) * (n % 5);
  }
  return counts;
}

}  // namespace hreduce::test
