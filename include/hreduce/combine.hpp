// The one combine kernel every algorithm of the runtime uses, and
// reduce_local (MPI_Reduce_local) on top of it.
//
//   combine(a, b, out, n, op):  out[i] = a[i] ∘ b[i],  `a` lower-ranked
//
// `out` may be exactly `a` or exactly `b` (accumulating on either side), or a
// third buffer; partial overlap is a caller bug (checked in debug builds).
//
// Predefined ops and elementwise user ops run as one plain loop, which GCC
// vectorizes for arithmetic types. It still does with out == a or out == b:
// its runtime alias check only asks whether `out` starts strictly inside the
// next vector's worth of an input, and equal pointers pass. No __restrict,
// which would be a lie in exactly those in-place cases.
//
// Vector-form user ops (f(in, inout, len): inout = in ∘ inout) fit out == b
// directly. For out == a the left operand is about to be overwritten by the
// right one, so it is parked chunk by chunk in a small stack buffer first;
// the kernel never allocates.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string>

#include "hreduce/error.hpp"
#define HREDUCE_PUBLIC_HEADER  // lets the detail headers in (they refuse direct includes)
#include "hreduce/detail/loc_kernel.hpp"
#include "hreduce/ops.hpp"

namespace hreduce {

namespace detail {

// Bytes of stack the vector-form path may use to park the left operand.
inline constexpr std::size_t kCombineStackBytes = 4096;

template <class T>
bool overlaps_partially(const T* x, const T* y, std::size_t n) {
  // Integer addresses: comparing pointers into different arrays with < is
  // unspecified.
  const auto px = reinterpret_cast<std::uintptr_t>(x);
  const auto py = reinterpret_cast<std::uintptr_t>(y);
  const std::uintptr_t bytes = n * sizeof(T);
  return px != py && px < py + bytes && py < px + bytes;
}

template <class T, class F>
void combine_vector_form(const T* a, const T* b, T* out, std::size_t n, const F& fn) {
  if (out == a) {
    constexpr std::size_t chunk =
        sizeof(T) >= kCombineStackBytes ? 1 : kCombineStackBytes / sizeof(T);
    // Raw storage: T need not be default-constructible. memcpy creates the
    // T objects there (T is trivially copyable, hence implicit-lifetime).
    alignas(T) unsigned char storage[chunk * sizeof(T)];
    for (std::size_t i = 0; i < n; i += chunk) {
      const std::size_t len = n - i < chunk ? n - i : chunk;
      std::memcpy(storage, a + i, len * sizeof(T));
      if (b != out) std::memcpy(out + i, b + i, len * sizeof(T));
      fn(std::launder(reinterpret_cast<const T*>(storage)), out + i, len);
    }
    return;
  }
  if (out != b) std::memcpy(out, b, n * sizeof(T));
  fn(a, out, n);
}

}  // namespace detail

template <class T, class Op>
void combine(const T* a, const T* b, T* out, std::size_t n, const Op& op) {
  detail::check_op<Op, T>();
  assert(!detail::overlaps_partially<T>(a, out, n) && "combine: out partially overlaps a");
  assert(!detail::overlaps_partially<T>(b, out, n) && "combine: out partially overlaps b");
  if (n == 0) return;

  if constexpr (detail::is_vector_user_op_v<Op>) {
    detail::combine_vector_form(a, b, out, n, op.function());
  } else if constexpr (detail::has_loc_kernel_v<T, Op>) {
    detail::loc_kernel<Op>(a, b, out, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  }
}

// MPI_Reduce_local: inout[i] = in[i] ∘ inout[i], `in` the lower-ranked
// operand. Null pointers are accepted only with n == 0.
template <class T, class Op>
void reduce_local(const T* in, T* inout, std::size_t n, const Op& op) {
  if (n > 0 && in == nullptr) {
    throw ArgumentError("reduce_local: in is a null pointer but n = " + std::to_string(n));
  }
  if (n > 0 && inout == nullptr) {
    throw ArgumentError("reduce_local: inout is a null pointer but n = " + std::to_string(n));
  }
  combine(in, inout, inout, n, op);
}

// The same on spans, which must have equal sizes. Deduction does not look
// through conversions, so pass spans or name T: reduce_local<double>(v, w, op).
template <class T, class Op>
void reduce_local(std::span<const T> in, std::span<T> inout, const Op& op) {
  if (in.size() != inout.size()) {
    throw ArgumentError("reduce_local: in has " + std::to_string(in.size()) +
                        " elements but inout has " + std::to_string(inout.size()));
  }
  reduce_local(in.data(), inout.data(), in.size(), op);
}

}  // namespace hreduce
