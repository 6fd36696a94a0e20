// One comparison problem: a collective over `members` vectors of `count`
// elements, with the input and output buffers every implementation shares,
// and the sequential oracle each implementation's result is checked against.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "hreduce/ops.hpp"
#include "hreduce/options.hpp"
#include "hreduce/types.hpp"

namespace hreduce::detail::compare {

// The collectives compared (reduce_scatter, whose counts vary, is not).
using hreduce::Collective;
inline constexpr Collective kCollectives[] = {Collective::reduce, Collective::allreduce,
                                              Collective::reduce_scatter_block, Collective::scan,
                                              Collective::exscan};

std::string_view name_of(Collective collective);

using MinLoc = ValueIndex<double, int>;

// What each element type reduces with, and the values the inputs hold. The
// values are small integers (or quarters), so every summation order gives
// the same bits and one oracle serves every implementation.
template <class T>
struct Element;

template <>
struct Element<double> {
  static constexpr std::string_view type = "double", op = "sum";
  static double identity() { return 0.0; }
  static double combine(double a, double b) { return a + b; }
  static double value(int member, std::size_t i) {
    return static_cast<double>(static_cast<long>((member * 31 + i * 17 + 5) % 17) - 8) * 0.25;
  }
  static constexpr auto hreduce_op() { return op::sum; }
};

template <>
struct Element<std::int32_t> {
  static constexpr std::string_view type = "int32", op = "sum";
  static std::int32_t identity() { return 0; }
  static std::int32_t combine(std::int32_t a, std::int32_t b) { return a + b; }
  static std::int32_t value(int member, std::size_t i) {
    return static_cast<std::int32_t>((member * 29 + i * 13 + 3) % 101) - 50;
  }
  static constexpr auto hreduce_op() { return op::sum; }
};

// MPI's MINLOC: the smaller value, and on a tie the smaller index.
template <>
struct Element<MinLoc> {
  static constexpr std::string_view type = "double_int", op = "minloc";
  static MinLoc identity() { return {std::numeric_limits<double>::infinity(), INT_MAX}; }
  static MinLoc combine(MinLoc a, MinLoc b) {
    return (b.value < a.value || (b.value == a.value && b.index < a.index)) ? b : a;
  }
  static MinLoc value(int member, std::size_t i) {
    return {static_cast<double>((member * 7 + i * 13) % 11), member};
  }
  static constexpr auto hreduce_op() { return op::minloc; }
};

// Elements per member for a vector of `bytes`: at least one, and for
// reduce_scatter_block a multiple of the members (equal blocks).
template <class T>
std::size_t element_count(Collective collective, int members, std::size_t bytes) {
  std::size_t n = std::max<std::size_t>(1, bytes / sizeof(T));
  if (collective == Collective::reduce_scatter_block) {
    n = std::max<std::size_t>(n / members, 1) * members;
  }
  return n;
}

// The sequential oracle: element i of member m's output, a rank-ordered fold
// of Element<T>::value (block is the reduce_scatter_block block size).
template <class T>
T expected_output(Collective collective, int members, int m, std::size_t i, std::size_t block) {
  const std::size_t at = collective == Collective::reduce_scatter_block ? m * block + i : i;
  const int last = collective == Collective::scan     ? m
                   : collective == Collective::exscan ? m - 1
                                                      : members - 1;
  T expected = Element<T>::value(0, at);
  for (int q = 1; q <= last; ++q) {
    expected = Element<T>::combine(expected, Element<T>::value(q, at));
  }
  return expected;
}

// Whether member m's output is defined after the call.
inline bool has_output(Collective collective, int m) {
  if (collective == Collective::reduce) return m == 0;  // the root
  if (collective == Collective::exscan) return m > 0;
  return true;
}

// Whether the collective reads member m's input: an exscan never reads the
// last member's.
inline bool needs_input(Collective collective, int m, int members) {
  return collective != Collective::exscan || m < members - 1;
}

template <class T>
struct Problem {
  Problem(Collective c, int p, std::size_t n) : collective(c), members(p), count(n) {
    in.resize(p);
    out.resize(p);
    for (int m = 0; m < p; ++m) {
      in[m].resize(n);
      for (std::size_t i = 0; i < n; ++i) in[m][i] = Element<T>::value(m, i);
      out[m].resize(output_count());
    }
  }

  Collective collective;
  int members;
  std::size_t count;  // each member's input; a multiple of members for reduce_scatter_block
  static constexpr int root = 0;
  std::vector<std::vector<T>> in, out;

  std::size_t block() const { return count / members; }
  std::size_t output_count() const {
    return collective == Collective::reduce_scatter_block ? block() : count;
  }
  // Whether member m's output is defined after the call.
  bool has_output(int m) const { return compare::has_output(collective, m); }
  // The bytes the collective must move: every input once, every defined output once.
  double moved_bytes() const {
    double outputs = 0;
    for (int m = 0; m < members; ++m) outputs += has_output(m) ? output_count() : 0;
    return (static_cast<double>(members) * count + outputs) * sizeof(T);
  }
  void clear_outputs() {
    for (auto& o : out) std::fill(o.begin(), o.end(), Element<T>::identity());
  }
  // Compares every defined output with a rank-ordered sequential fold. Returns
  // the first wrong member, or -1.
  int first_wrong_member() const {
    for (int m = 0; m < members; ++m) {
      if (!has_output(m)) continue;
      for (std::size_t i = 0; i < output_count(); ++i) {
        if (!(out[m][i] == expected_output<T>(collective, members, m, i, block()))) return m;
      }
    }
    return -1;
  }
};

}  // namespace hreduce::detail::compare
