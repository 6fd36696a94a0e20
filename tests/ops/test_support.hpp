// Type lists, input generators and a mismatch finder shared by the op tests.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>

#include "hreduce/types.hpp"

namespace hreduce_test {

using IntegerTypes = std::tuple<signed char, unsigned char, short, unsigned short, int, unsigned,
                                long, unsigned long, long long, unsigned long long>;
using FloatingTypes = std::tuple<float, double, long double>;
using ComplexTypes =
    std::tuple<std::complex<float>, std::complex<double>, std::complex<long double>>;
using PairTypes =
    std::tuple<hreduce::float_int, hreduce::double_int, hreduce::long_double_int,
               hreduce::short_int, hreduce::int_int, hreduce::long_int, hreduce::float_int64,
               hreduce::double_int64, hreduce::long_double_int64, hreduce::short_int64,
               hreduce::int_int64, hreduce::long_int64>;

template <class... Tuples>
using concat_t = decltype(std::tuple_cat(std::declval<Tuples>()...));

// Every type at least one predefined op accepts.
using AllElementTypes =
    concat_t<IntegerTypes, FloatingTypes, ComplexTypes, std::tuple<bool, std::byte>, PairTypes>;

// A heap array of T with value semantics. std::vector<bool> cannot stand in:
// it packs bits and has no data().
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : data_(std::make_unique<T[]>(n)), size_(n) {}
  Buffer(std::size_t n, const T& value) : Buffer(n) {
    for (std::size_t i = 0; i < n; ++i) data_[i] = value;
  }
  Buffer(const Buffer& other) : Buffer(other.size_) {
    for (std::size_t i = 0; i < size_; ++i) data_[i] = other.data_[i];
  }
  Buffer& operator=(const Buffer& other) {
    Buffer copy(other);
    std::swap(data_, copy.data_);
    std::swap(size_, copy.size_);
    return *this;
  }
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0;
};

// Inputs chosen so that the oracle comparison can be exact:
// - integers: a quarter zeros (logical ops), the rest full-width random bits,
//   so sums and products wrap often;
// - floating point: multiples of 1/4 in [-512, 512], whose sums and products
//   (also complex ones) are exact even in float, so evaluation order and FMA
//   contraction cannot change the bits;
// - pairs: values from a set of 8 so ties are frequent, indices random.
template <class T>
T random_value(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_same_v<T, std::byte>) {
    return static_cast<std::byte>(rng());
  } else if constexpr (hreduce::is_integer_v<T>) {
    return rng() % 4 == 0 ? T{0} : static_cast<T>(rng());
  } else if constexpr (hreduce::is_floating_v<T>) {
    return static_cast<T>(static_cast<int>(rng() % 4097) - 2048) / T{4};
  } else if constexpr (hreduce::is_complex_v<T>) {
    using R = typename T::value_type;
    const R re = random_value<R>(rng);
    return T(re, random_value<R>(rng));
  } else {
    static_assert(hreduce::is_value_index_v<T>);
    using V = typename T::value_type;
    using I = typename T::index_type;
    return T{static_cast<V>(static_cast<int>(rng() % 8) - 4), static_cast<I>(rng() % 1000)};
  }
}

template <class T>
Buffer<T> random_buffer(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = random_value<T>(rng);
  return v;
}

inline constexpr std::size_t kNoMismatch = static_cast<std::size_t>(-1);

// Index of the first element where got and want differ, or kNoMismatch.
// One CHECK per vector instead of one per element keeps 100003-element runs
// fast and their failure reports short.
template <class Container>
std::size_t first_mismatch(const Container& got, const Container& want) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == want[i])) return i;
  }
  return kNoMismatch;
}

}  // namespace hreduce_test
