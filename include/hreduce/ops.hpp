// Reduction operators: the twelve predefined ops of docs/spec.md and user-defined
// ops made with make_op.
//
// Operand order. Every op is called as op(a, b) where `a` is the operand of
// the LOWER-ranked member (the left operand of `∘`). For the predefined ops
// the order does not matter for the value; for a non-commutative user op it
// is the whole point, so the runtime keeps it everywhere.
//
// Type checking. Each predefined op has a compile-time row `accepts<T>`
// (docs/spec.md's table). Applying an op to a type outside its row instantiates
// detail::op_type_check<Op, T>, whose static_assert fails; GCC then prints
// "op_type_check<hreduce::op::band_t, double>" in the error context, naming
// both the op and the type. The ReductionOp concept exposes the same table
// for constraint checks, but the collectives themselves do not constrain on
// it: a constraint failure would say "no matching function" and bury the two
// names under overload candidates.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hreduce/types.hpp"

namespace hreduce {

namespace detail {

template <class Op, class T>
struct op_type_check {
  static_assert(Op::template accepts<T>,
                "hreduce: this predefined op does not accept this element type "
                "(see op_type_check<Op, T> in the error context)");
  static constexpr bool value = true;
};

// Integer sum/prod in the unsigned type of at least int's rank. Unsigned
// arithmetic wraps by definition, and going to at least `unsigned` avoids the
// promotion trap: unsigned short * unsigned short promotes to (signed) int and
// can overflow. The conversion back to T is modular since C++20.
template <class T>
using wrap_t = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <class T>
constexpr T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}
template <class T>
constexpr T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}

template <class T>
constexpr bool truth(const T& x) {
  return x != T{};
}

// Shared by the twelve ops: the type check, and the commutativity every
// predefined op has. `Derived::apply` holds the arithmetic and is only ever
// instantiated for accepted types, so a rejected type yields the one
// static_assert above instead of a cascade of "no operator&" errors.
template <class Derived>
struct predefined_op {
  static constexpr bool commutative = true;

  template <class T>
  constexpr T operator()(const T& a, const T& b) const {
    static_assert(op_type_check<Derived, T>::value);
    if constexpr (Derived::template accepts<T>) {
      return Derived::apply(a, b);
    } else {
      return a;  // not reached: the build has already failed above
    }
  }
};

}  // namespace detail

// The predefined ops. Use the objects (hreduce::op::sum), not the tag types.
namespace op {

// max and min on floating point propagate NaN: if either operand is NaN the
// result is NaN (which NaN, when both are, is unspecified). -0.0 and +0.0
// compare equal and either may be returned. Infinities order as usual. The
// selects below are written as branch-free comparisons so that GCC turns a
// loop over them into vector compare-and-blend.
struct max_t : detail::predefined_op<max_t> {
  static constexpr std::string_view name = "max";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_floating_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    if constexpr (is_floating_v<T>) {
      // b wins when it is larger or NaN; if only a is NaN, a is kept.
      return ((a < b) | (b != b)) ? b : a;
    } else {
      return a < b ? b : a;
    }
  }
};

struct min_t : detail::predefined_op<min_t> {
  static constexpr std::string_view name = "min";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_floating_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    if constexpr (is_floating_v<T>) {
      return ((b < a) | (b != b)) ? b : a;
    } else {
      return b < a ? b : a;
    }
  }
};

struct sum_t : detail::predefined_op<sum_t> {
  static constexpr std::string_view name = "sum";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_floating_v<T> || is_complex_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    if constexpr (is_integer_v<T>) {
      return detail::wrapping_add(a, b);
    } else {
      return a + b;
    }
  }
};

struct prod_t : detail::predefined_op<prod_t> {
  static constexpr std::string_view name = "prod";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_floating_v<T> || is_complex_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    if constexpr (is_integer_v<T>) {
      return detail::wrapping_mul(a, b);
    } else {
      return a * b;
    }
  }
};

// Logical ops return 0 or 1 (false or true for bool). `&` and `!=` on the
// truth values instead of `&&`/`||` keep the loop free of branches.
struct land_t : detail::predefined_op<land_t> {
  static constexpr std::string_view name = "land";
  template <class T>
  static constexpr bool accepts = is_logical_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    return static_cast<T>(detail::truth(a) & detail::truth(b));
  }
};

struct lor_t : detail::predefined_op<lor_t> {
  static constexpr std::string_view name = "lor";
  template <class T>
  static constexpr bool accepts = is_logical_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    return static_cast<T>(detail::truth(a) | detail::truth(b));
  }
};

struct lxor_t : detail::predefined_op<lxor_t> {
  static constexpr std::string_view name = "lxor";
  template <class T>
  static constexpr bool accepts = is_logical_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    return static_cast<T>(detail::truth(a) != detail::truth(b));
  }
};

// Bitwise ops; the casts undo integer promotion (and are identities for
// std::byte, whose operators already return std::byte).
struct band_t : detail::predefined_op<band_t> {
  static constexpr std::string_view name = "band";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_byte_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    return static_cast<T>(a & b);
  }
};

struct bor_t : detail::predefined_op<bor_t> {
  static constexpr std::string_view name = "bor";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_byte_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    return static_cast<T>(a | b);
  }
};

struct bxor_t : detail::predefined_op<bxor_t> {
  static constexpr std::string_view name = "bxor";
  template <class T>
  static constexpr bool accepts = is_integer_v<T> || is_byte_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    return static_cast<T>(a ^ b);
  }
};

// (u, i) ∘ (v, j) = (max(u, v), k), k = the index of the strictly larger
// value, or min(i, j) on a tie. The tie rule is what makes the op commutative
// and makes a reduction of (u_r, r) report the lowest rank holding the
// maximum. With a NaN value the result is unspecified (as in MPI).
struct maxloc_t : detail::predefined_op<maxloc_t> {
  static constexpr std::string_view name = "maxloc";
  template <class T>
  static constexpr bool accepts = is_value_index_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    if (a.value > b.value) return a;
    if (b.value > a.value) return b;
    return T{a.value, b.index < a.index ? b.index : a.index};
  }
};

struct minloc_t : detail::predefined_op<minloc_t> {
  static constexpr std::string_view name = "minloc";
  template <class T>
  static constexpr bool accepts = is_value_index_v<T>;

  template <class T>
  static constexpr T apply(const T& a, const T& b) {
    if (a.value < b.value) return a;
    if (b.value < a.value) return b;
    return T{a.value, b.index < a.index ? b.index : a.index};
  }
};

inline constexpr max_t max{};
inline constexpr min_t min{};
inline constexpr sum_t sum{};
inline constexpr prod_t prod{};
inline constexpr land_t land{};
inline constexpr lor_t lor{};
inline constexpr lxor_t lxor{};
inline constexpr band_t band{};
inline constexpr bor_t bor{};
inline constexpr bxor_t bxor{};
inline constexpr maxloc_t maxloc{};
inline constexpr minloc_t minloc{};

}  // namespace op

// --- user-defined ops ---------------------------------------------------------

enum class Commutativity { commutative, non_commutative };

namespace detail {

// The two shapes a user function may have. Both are checked on a const F
// because the runtime applies ops through const references (an op may be
// shared by many members at once).
//
//   elementwise: T f(const T& a, const T& b)         returns a ∘ b
//   vector:      void f(const T* in, T* inout, size_t n)
//                inout[i] = in[i] ∘ inout[i]          (MPI_User_function)
template <class F, class T>
concept ElementwiseFn = requires(const F& f, const T& a, const T& b) {
  { f(a, b) } -> std::convertible_to<T>;
};

template <class F, class T>
concept VectorFn = requires(const F& f, const T* in, T* inout, std::size_t n) {
  f(in, inout, n);
};

}  // namespace detail

// An op made from a user function; see make_op. The function is stored by
// value and must not call into the runtime. If it throws, the exception
// propagates out of combine / reduce_local unchanged.
template <class T, class F>
class UserOp {
  static_assert(std::is_trivially_copyable_v<T>,
                "hreduce: a user op's element type must be trivially copyable "
                "(elements are moved between members with memcpy)");
  static_assert(!(detail::ElementwiseFn<F, T> && detail::VectorFn<F, T>),
                "hreduce: the user function is callable both as T(const T&, const T&) "
                "and as void(const T*, T*, std::size_t); give it exactly one form");
  static_assert(detail::ElementwiseFn<F, T> || detail::VectorFn<F, T>,
                "hreduce: the user function must be callable (as const) either as "
                "T f(const T& a, const T& b) or as void f(const T* in, T* inout, "
                "std::size_t len)");

 public:
  using value_type = T;
  using function_type = F;
  // Whether the function takes whole vectors (MPI_User_function style).
  static constexpr bool vector_form = detail::VectorFn<F, T>;

  constexpr UserOp(F fn, Commutativity c, std::optional<T> identity)
      : fn_(std::move(fn)), commutativity_(c), identity_(std::move(identity)) {}

  constexpr bool commutative() const { return commutativity_ == Commutativity::commutative; }
  constexpr const std::optional<T>& identity() const { return identity_; }
  // How messages name this op: "user op", or the name given to named().
  constexpr std::string_view name() const { return name_; }
  // A copy called `name` in messages (a string that outlives the op, such
  // as a literal): make_op<Cx>(fn).named("complex product").
  constexpr UserOp named(const char* name) const {
    UserOp copy = *this;
    copy.name_ = name;
    return copy;
  }
  constexpr const F& function() const { return fn_; }

  // One element, a ∘ b with `a` the lower-ranked operand. For a vector-form
  // function this is a call with len = 1; combine() calls it on whole vectors.
  constexpr T operator()(const T& a, const T& b) const {
    if constexpr (vector_form) {
      T inout = b;
      fn_(&a, &inout, std::size_t{1});
      return inout;
    } else {
      return static_cast<T>(fn_(a, b));
    }
  }

 private:
  F fn_;
  Commutativity commutativity_;
  std::optional<T> identity_;
  const char* name_ = "user op";
};

// A user op on element type T (given explicitly: make_op<Point>(fn)).
// `identity`, when given, is an element e with e ∘ x == x ∘ e == x; the
// runtime may use it but never needs it.
template <class T, class F>
constexpr UserOp<T, std::decay_t<F>> make_op(F&& fn, Commutativity c = Commutativity::commutative,
                                             std::optional<T> identity = {}) {
  return UserOp<T, std::decay_t<F>>(std::forward<F>(fn), c, std::move(identity));
}

// --- classification -----------------------------------------------------------

namespace detail {

template <class Op>
inline constexpr bool is_predefined_op_v =
    std::is_base_of_v<predefined_op<Op>, Op>&& std::is_empty_v<Op>;

template <class Op>
inline constexpr bool is_user_op_v = false;
template <class T, class F>
inline constexpr bool is_user_op_v<UserOp<T, F>> = true;

template <class Op>
inline constexpr bool is_vector_user_op_v = false;
template <class T, class F>
inline constexpr bool is_vector_user_op_v<UserOp<T, F>> = UserOp<T, F>::vector_form;

template <class Op, class T>
inline constexpr bool is_user_op_for_v = false;
template <class T, class F>
inline constexpr bool is_user_op_for_v<UserOp<T, F>, T> = true;

// The check every application of an op to a T[] goes through. Predefined ops
// get op_type_check (naming op and type); user ops must have been made for T.
template <class Op, class T>
constexpr void check_op() {
  static_assert(is_predefined_op_v<Op> || is_user_op_v<Op>,
                "hreduce: an op must be a predefined op (hreduce::op::sum, ...) or "
                "a user op made with hreduce::make_op<T>(fn)");
  if constexpr (is_predefined_op_v<Op>) {
    static_assert(op_type_check<Op, T>::value);
  } else if constexpr (is_user_op_v<Op>) {
    static_assert(std::is_same_v<typename Op::value_type, T>,
                  "hreduce: this user op was made for a different element type "
                  "(make_op<T> and the buffers must agree on T)");
  }
}

}  // namespace detail

// True for a predefined op whose row accepts T and for a user op made for T.
template <class Op, class T>
concept ReductionOp = (detail::is_predefined_op_v<std::remove_cvref_t<Op>> &&
                       std::remove_cvref_t<Op>::template accepts<T>) ||
                      detail::is_user_op_for_v<std::remove_cvref_t<Op>, T>;

template <class Op>
constexpr bool is_commutative(const Op& op) {
  if constexpr (detail::is_predefined_op_v<Op>) {
    return Op::commutative;
  } else {
    return op.commutative();
  }
}

// "sum", "maxloc", ..., a user op's name or "user op": for messages.
template <class Op>
constexpr std::string_view op_name(const Op& op) {
  if constexpr (detail::is_predefined_op_v<Op>) {
    return Op::name;
  } else {
    return op.name();
  }
}

}  // namespace hreduce
