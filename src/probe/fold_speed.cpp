// The fold kernel's speed through the public reduce_local, per op class and
// element type, on vectors that stay in L1/L2 (8 KiB each): what a member
// pays per element once the data is near, apart from memory bandwidth.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"
#include "src/probe/measurements.hpp"

namespace hreduce::detail::probe {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kVectorBytes = 8 * 1024;
constexpr int kBlocks = 7;

template <class T>
T input_value(std::size_t i, bool ones) {
  if constexpr (is_value_index_v<T>) {
    return T{static_cast<double>(i % 17), static_cast<int>(i)};
  } else {
    // prod folds ones: the product then never overflows nor underflows.
    return static_cast<T>(ones ? 1 : i % 17);
  }
}

template <class T, class Op>
FoldSpeed time_fold(const char* op_class, const char* type, const Op& op, double seconds) {
  const std::size_t n = kVectorBytes / sizeof(T);
  std::vector<T> in(n), inout(n);
  const bool ones = std::string(op_class) == "prod";
  for (std::size_t i = 0; i < n; ++i) in[i] = inout[i] = input_value<T>(i, ones);
  // A short warm-up sizes the blocks.
  long done = 0;
  const auto warm = Clock::now();
  while (Clock::now() - warm < std::chrono::milliseconds(2)) {
    reduce_local(in.data(), inout.data(), n, op);
    ++done;
  }
  const double per_call =
      std::chrono::duration<double>(Clock::now() - warm).count() / static_cast<double>(done);
  const long calls = std::max(16L, static_cast<long>(seconds / kBlocks / per_call));
  std::vector<double> rates;
  for (int block = 0; block < kBlocks; ++block) {
    const auto start = Clock::now();
    for (long c = 0; c < calls; ++c) reduce_local(in.data(), inout.data(), n, op);
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    rates.push_back(static_cast<double>(n) * static_cast<double>(calls) / took);
  }
  FoldSpeed speed{op_class, type, static_cast<int>(sizeof(T)), median(rates), 0};
  speed.bytes_per_second = 3.0 * sizeof(T) * speed.elements_per_second;
  return speed;
}

}  // namespace

std::vector<FoldSpeed> fold_speeds(double seconds) {
  const double each = seconds / 14;
  return {
      time_fold<std::int8_t>("sum", "int8", op::sum, each),
      time_fold<std::int16_t>("sum", "int16", op::sum, each),
      time_fold<std::int32_t>("sum", "int32", op::sum, each),
      time_fold<std::int64_t>("sum", "int64", op::sum, each),
      time_fold<float>("sum", "float", op::sum, each),
      time_fold<double>("sum", "double", op::sum, each),
      time_fold<double>("prod", "double", op::prod, each),
      time_fold<std::int32_t>("max", "int32", op::max, each),
      time_fold<float>("max", "float", op::max, each),
      time_fold<double>("max", "double", op::max, each),
      time_fold<std::int32_t>("band", "int32", op::band, each),
      time_fold<std::int64_t>("band", "int64", op::band, each),
      time_fold<std::int32_t>("land", "int32", op::land, each),
      time_fold<double_int>("minloc", "double_int", op::minloc, each),
  };
}

}  // namespace hreduce::detail::probe
