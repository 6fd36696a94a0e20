// Conformance: docs/spec.md's table of predefined ops and accepted element types,
// checked at compile time, row by row, plus the notable exclusions. The
// run-time test case only exists so that the binary has something to report.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"
#include "test_support.hpp"

namespace {

using namespace hreduce_test;
namespace op = hreduce::op;

template <class Op, class Tuple>
constexpr bool accepts_all = false;
template <class Op, class... Ts>
constexpr bool accepts_all<Op, std::tuple<Ts...>> = (Op::template accepts<Ts> && ...);

template <class Op, class Tuple>
constexpr bool accepts_none = false;
template <class Op, class... Ts>
constexpr bool accepts_none<Op, std::tuple<Ts...>> = (!Op::template accepts<Ts> && ...);

// Types no predefined op accepts.
using Strangers = std::tuple<char, wchar_t, char8_t, char16_t, char32_t, const int, int*,
                             std::string, std::tuple<int, int>>;

template <class Op>
constexpr bool rejects_strangers = accepts_none<Op, Strangers>;

// max, min: integers and floating point.
static_assert(accepts_all<op::max_t, IntegerTypes> && accepts_all<op::max_t, FloatingTypes>);
static_assert(accepts_all<op::min_t, IntegerTypes> && accepts_all<op::min_t, FloatingTypes>);
static_assert(accepts_none<op::max_t, ComplexTypes> && accepts_none<op::max_t, PairTypes>);
static_assert(accepts_none<op::min_t, ComplexTypes> && accepts_none<op::min_t, PairTypes>);
static_assert(!op::max_t::accepts<bool> && !op::max_t::accepts<std::byte>);
static_assert(!op::min_t::accepts<bool> && !op::min_t::accepts<std::byte>);

// sum, prod: integers, floating point, complex.
static_assert(accepts_all<op::sum_t, IntegerTypes> && accepts_all<op::sum_t, FloatingTypes> &&
              accepts_all<op::sum_t, ComplexTypes>);
static_assert(accepts_all<op::prod_t, IntegerTypes> && accepts_all<op::prod_t, FloatingTypes> &&
              accepts_all<op::prod_t, ComplexTypes>);
static_assert(!op::sum_t::accepts<bool> && !op::sum_t::accepts<std::byte>);
static_assert(!op::prod_t::accepts<bool> && !op::prod_t::accepts<std::byte>);
static_assert(accepts_none<op::sum_t, PairTypes> && accepts_none<op::prod_t, PairTypes>);

// land, lor, lxor: integers and bool.
static_assert(accepts_all<op::land_t, IntegerTypes> && op::land_t::accepts<bool>);
static_assert(accepts_all<op::lor_t, IntegerTypes> && op::lor_t::accepts<bool>);
static_assert(accepts_all<op::lxor_t, IntegerTypes> && op::lxor_t::accepts<bool>);
static_assert(accepts_none<op::land_t, FloatingTypes> && accepts_none<op::land_t, ComplexTypes>);
static_assert(accepts_none<op::lor_t, FloatingTypes> && accepts_none<op::lxor_t, FloatingTypes>);
static_assert(!op::land_t::accepts<std::byte> && !op::lor_t::accepts<std::byte> &&
              !op::lxor_t::accepts<std::byte>);

// band, bor, bxor: integers and bytes.
static_assert(accepts_all<op::band_t, IntegerTypes> && op::band_t::accepts<std::byte>);
static_assert(accepts_all<op::bor_t, IntegerTypes> && op::bor_t::accepts<std::byte>);
static_assert(accepts_all<op::bxor_t, IntegerTypes> && op::bxor_t::accepts<std::byte>);
static_assert(accepts_none<op::band_t, FloatingTypes> && accepts_none<op::bor_t, FloatingTypes> &&
              accepts_none<op::bxor_t, FloatingTypes>);
static_assert(!op::band_t::accepts<bool> && !op::bor_t::accepts<bool> &&
              !op::bxor_t::accepts<bool>);

// maxloc, minloc: exactly the value-index pairs.
static_assert(accepts_all<op::maxloc_t, PairTypes> && accepts_all<op::minloc_t, PairTypes>);
static_assert(accepts_none<op::maxloc_t, IntegerTypes> &&
              accepts_none<op::maxloc_t, FloatingTypes> &&
              accepts_none<op::minloc_t, IntegerTypes> &&
              accepts_none<op::minloc_t, FloatingTypes>);
struct LookAlike {
  double value;
  int index;
};
static_assert(!op::maxloc_t::accepts<LookAlike> && !op::minloc_t::accepts<LookAlike>);

static_assert(rejects_strangers<op::max_t> && rejects_strangers<op::min_t> &&
              rejects_strangers<op::sum_t> && rejects_strangers<op::prod_t> &&
              rejects_strangers<op::land_t> && rejects_strangers<op::lor_t> &&
              rejects_strangers<op::lxor_t> && rejects_strangers<op::band_t> &&
              rejects_strangers<op::bor_t> && rejects_strangers<op::bxor_t> &&
              rejects_strangers<op::maxloc_t> && rejects_strangers<op::minloc_t>);

// The exclusions the brief singles out.
static_assert(!op::sum_t::accepts<bool>);
static_assert(!op::band_t::accepts<double>);
static_assert(!op::maxloc_t::accepts<double>);
static_assert(!op::max_t::accepts<std::complex<double>>);
static_assert(!op::land_t::accepts<std::byte>);

// Fixed-width types are covered through the types they alias.
static_assert(op::sum_t::accepts<std::int8_t> && op::sum_t::accepts<std::uint8_t> &&
              op::sum_t::accepts<std::int64_t> && op::sum_t::accepts<std::uint64_t> &&
              op::band_t::accepts<std::uint8_t>);

// Categories.
static_assert(!hreduce::is_integer_v<char> && !hreduce::is_integer_v<bool>);
static_assert(hreduce::is_byte_v<unsigned char> && !hreduce::is_byte_v<signed char>);
static_assert(hreduce::Logical<bool> && hreduce::Integer<long long> && hreduce::Byte<std::byte>);

// The concept mirrors the table.
static_assert(hreduce::ReductionOp<op::sum_t, int> && !hreduce::ReductionOp<op::sum_t, bool>);
static_assert(hreduce::ReductionOp<const op::maxloc_t&, hreduce::double_int>);
static_assert(!hreduce::ReductionOp<int, int>);

// Names and commutativity.
static_assert(op::max_t::name == "max" && op::min_t::name == "min" && op::sum_t::name == "sum" &&
              op::prod_t::name == "prod" && op::land_t::name == "land" &&
              op::lor_t::name == "lor" && op::lxor_t::name == "lxor" &&
              op::band_t::name == "band" && op::bor_t::name == "bor" &&
              op::bxor_t::name == "bxor" && op::maxloc_t::name == "maxloc" &&
              op::minloc_t::name == "minloc");
static_assert(hreduce::is_commutative(op::sum) && hreduce::is_commutative(op::minloc) &&
              op::bxor_t::commutative);
static_assert(hreduce::op_name(op::lxor) == "lxor");

// The ops are usable in constant expressions, which also proves the integer
// wrap-around is free of undefined behaviour (UB is not a constant).
static_assert(op::sum(std::int8_t{127}, std::int8_t{1}) == std::int8_t{-128});
static_assert(op::prod(static_cast<unsigned short>(65535), static_cast<unsigned short>(65535)) ==
              1);
static_assert(op::maxloc(hreduce::int_int{3, 7}, hreduce::int_int{3, 2}) == hreduce::int_int{3, 2});

static_assert(std::tuple_size_v<AllElementTypes> == 10 + 3 + 3 + 2 + 12);

}  // namespace

TEST_CASE("the op/type acceptance table holds at compile time", "[ops][conformance]") {
  SUCCEED("checked by static_assert when this file compiled");
}
