// Element types and the categories the predefined ops are defined on
// (docs/spec.md, "Predefined ops and the types they accept").
//
// Categories are closed lists of exact types, not std::is_integral: plain
// `char` (whose signedness is the platform's choice), `bool`, `wchar_t` and
// the `charN_t` types are not numbers in the MPI sense and must not be summed
// by accident. The fixed-width types (std::int32_t, ...) are aliases of the
// listed types, so they are covered without being named. cv-qualified types
// are not in any category: buffers hold plain objects.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace hreduce {

namespace detail {
template <class T, class... Us>
inline constexpr bool is_one_of_v = (std::is_same_v<T, Us> || ...);
}  // namespace detail

template <class T>
inline constexpr bool is_integer_v =
    detail::is_one_of_v<T, signed char, unsigned char, short, unsigned short, int, unsigned, long,
                        unsigned long, long long, unsigned long long>;

template <class T>
inline constexpr bool is_floating_v = detail::is_one_of_v<T, float, double, long double>;

template <class T>
inline constexpr bool is_complex_v =
    detail::is_one_of_v<T, std::complex<float>, std::complex<double>, std::complex<long double>>;

// The types land/lor/lxor accept: integers (nonzero = true) and bool.
template <class T>
inline constexpr bool is_logical_v = is_integer_v<T> || std::is_same_v<T, bool>;

// MPI's BYTE: raw octets. unsigned char is both an integer and a byte.
template <class T>
inline constexpr bool is_byte_v = detail::is_one_of_v<T, std::byte, unsigned char>;

template <class T>
concept Integer = is_integer_v<T>;
template <class T>
concept Floating = is_floating_v<T>;
template <class T>
concept Complex = is_complex_v<T>;
template <class T>
concept Logical = is_logical_v<T>;
template <class T>
concept Byte = is_byte_v<T>;

// --- MAXLOC / MINLOC pairs ----------------------------------------------------

template <class V>
inline constexpr bool is_loc_value_v =
    detail::is_one_of_v<V, float, double, long double, short, int, long>;
template <class I>
inline constexpr bool is_loc_index_v = detail::is_one_of_v<I, int, std::int64_t>;

// A value and where it came from (MPI's FLOAT_INT, 2INT, ...). The pair set is
// closed, as in MPI, so that MAXLOC/MINLOC on an arbitrary struct is a
// compile-time error rather than a silently field-wise comparison. Padding
// bytes (e.g. after `int` in double_int) carry no meaning: compare with ==,
// never memcmp.
template <class V, class I>
requires(is_loc_value_v<V>&& is_loc_index_v<I>) struct ValueIndex {
  using value_type = V;
  using index_type = I;

  V value;
  I index;

  friend constexpr bool operator==(const ValueIndex&, const ValueIndex&) = default;
};

template <class T>
inline constexpr bool is_value_index_v = false;
template <class V, class I>
inline constexpr bool is_value_index_v<ValueIndex<V, I>> = true;

template <class T>
concept ValueIndexPair = is_value_index_v<T>;

// MPI's names, with `int` indices.
using float_int = ValueIndex<float, int>;
using double_int = ValueIndex<double, int>;
using long_double_int = ValueIndex<long double, int>;
using short_int = ValueIndex<short, int>;
using int_int = ValueIndex<int, int>;  // MPI_2INT
using long_int = ValueIndex<long, int>;

// 64-bit indices, for `rank * LEN + position` encodings that outgrow int.
using float_int64 = ValueIndex<float, std::int64_t>;
using double_int64 = ValueIndex<double, std::int64_t>;
using long_double_int64 = ValueIndex<long double, std::int64_t>;
using short_int64 = ValueIndex<short, std::int64_t>;
using int_int64 = ValueIndex<int, std::int64_t>;
using long_int64 = ValueIndex<long, std::int64_t>;

static_assert(std::is_trivially_copyable_v<double_int>);
static_assert(std::is_trivially_copyable_v<long_double_int64>);

}  // namespace hreduce
