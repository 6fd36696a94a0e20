#include "src/mpi_dropin/datatypes.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <complex>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "hreduce/ops.hpp"
#include "hreduce/types.hpp"
#include "src/common/copy.hpp"

namespace hreduce::detail::mpi_dropin {
namespace {

// MPI's op table by category ("Predefined Reduction Operations").
enum Category : unsigned {
  kNone = 0,
  kCInteger = 1,
  kFortranInteger = 2,
  kFloating = 4,
  kLogical = 8,
  kComplex = 16,
  kByte = 32,
  kPair = 64,
};

// Types whose predefined ops run compiled here rather than through
// PMPI_Reduce_local.
enum class Native {
  none,
  schar,
  uchar,
  shrt,
  ushrt,
  int_,
  uint,
  long_,
  ulong,
  llong,
  ullong,
  flt,
  dbl,
  cflt,
  cdbl,
  float_int,
  double_int,
  long_int,
  int_int,
  short_int,
  long_double_int,
};

struct TypeRow {
  MPI_Datatype type;
  const char* name;
  unsigned category;
  Native native;
  std::size_t extent = 0;  // filled in when the table is built
};

// One row per predefined type: a table, longer than a function should be.
const std::vector<TypeRow>& type_table() {
  static const std::vector<TypeRow> rows = [] {
    std::vector<TypeRow> r = {
        {MPI_CHAR, "MPI_CHAR", kNone, Native::none},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", kCInteger, Native::schar},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", kCInteger, Native::uchar},
        {MPI_BYTE, "MPI_BYTE", kByte, Native::uchar},
        {MPI_SHORT, "MPI_SHORT", kCInteger, Native::shrt},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", kCInteger, Native::ushrt},
        {MPI_INT, "MPI_INT", kCInteger, Native::int_},
        {MPI_UNSIGNED, "MPI_UNSIGNED", kCInteger, Native::uint},
        {MPI_LONG, "MPI_LONG", kCInteger, Native::long_},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", kCInteger, Native::ulong},
        {MPI_LONG_LONG_INT, "MPI_LONG_LONG", kCInteger, Native::llong},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", kCInteger, Native::ullong},
        {MPI_INT8_T, "MPI_INT8_T", kCInteger, Native::schar},
        {MPI_UINT8_T, "MPI_UINT8_T", kCInteger, Native::uchar},
        {MPI_INT16_T, "MPI_INT16_T", kCInteger, Native::shrt},
        {MPI_UINT16_T, "MPI_UINT16_T", kCInteger, Native::ushrt},
        {MPI_INT32_T, "MPI_INT32_T", kCInteger, Native::int_},
        {MPI_UINT32_T, "MPI_UINT32_T", kCInteger, Native::uint},
        {MPI_INT64_T, "MPI_INT64_T", kCInteger, Native::long_},
        {MPI_UINT64_T, "MPI_UINT64_T", kCInteger, Native::ulong},
        {MPI_AINT, "MPI_AINT", kCInteger, Native::none},
        {MPI_OFFSET, "MPI_OFFSET", kCInteger, Native::none},
        {MPI_COUNT, "MPI_COUNT", kCInteger, Native::none},
        {MPI_WCHAR, "MPI_WCHAR", kNone, Native::none},
        {MPI_FLOAT, "MPI_FLOAT", kFloating, Native::flt},
        {MPI_DOUBLE, "MPI_DOUBLE", kFloating, Native::dbl},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", kFloating, Native::none},
        {MPI_C_BOOL, "MPI_C_BOOL", kLogical, Native::none},
        {MPI_CXX_BOOL, "MPI_CXX_BOOL", kLogical, Native::none},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", kComplex, Native::cflt},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", kComplex, Native::cdbl},
        {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", kComplex, Native::none},
        {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", kComplex, Native::cflt},
        {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", kComplex, Native::cdbl},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", kComplex, Native::none},
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", kPair, Native::float_int},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", kPair, Native::double_int},
        {MPI_LONG_INT, "MPI_LONG_INT", kPair, Native::long_int},
        {MPI_2INT, "MPI_2INT", kPair, Native::int_int},
        {MPI_SHORT_INT, "MPI_SHORT_INT", kPair, Native::short_int},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", kPair, Native::long_double_int},
        // Fortran. INTEGER, REAL and DOUBLE PRECISION are int, float and
        // double with gfortran; LOGICAL's representation is the compiler's,
        // so MPI combines it.
        {MPI_INTEGER, "MPI_INTEGER", kFortranInteger, Native::int_},
        {MPI_INTEGER1, "MPI_INTEGER1", kFortranInteger, Native::schar},
        {MPI_INTEGER2, "MPI_INTEGER2", kFortranInteger, Native::shrt},
        {MPI_INTEGER4, "MPI_INTEGER4", kFortranInteger, Native::int_},
        {MPI_INTEGER8, "MPI_INTEGER8", kFortranInteger, Native::long_},
        {MPI_REAL, "MPI_REAL", kFloating, Native::flt},
        {MPI_REAL4, "MPI_REAL4", kFloating, Native::flt},
        {MPI_REAL8, "MPI_REAL8", kFloating, Native::dbl},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", kFloating, Native::dbl},
        {MPI_COMPLEX, "MPI_COMPLEX", kComplex, Native::cflt},
        {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", kComplex, Native::cdbl},
        {MPI_COMPLEX8, "MPI_COMPLEX8", kComplex, Native::cflt},
        {MPI_COMPLEX16, "MPI_COMPLEX16", kComplex, Native::cdbl},
        {MPI_LOGICAL, "MPI_LOGICAL", kLogical, Native::none},
        {MPI_CHARACTER, "MPI_CHARACTER", kNone, Native::none},
        {MPI_2REAL, "MPI_2REAL", kPair, Native::none},
        {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", kPair, Native::none},
        {MPI_2INTEGER, "MPI_2INTEGER", kPair, Native::none},
    };
    // A Fortran type MPI was built without is MPI_DATATYPE_NULL: no row.
    std::erase_if(r, [](const TypeRow& row) { return row.type == MPI_DATATYPE_NULL; });
    for (TypeRow& row : r) {
      MPI_Aint lb = 0, extent = 0;
      PMPI_Type_get_extent(row.type, &lb, &extent);
      row.extent = static_cast<std::size_t>(extent);
    }
    return r;
  }();
  return rows;
}

struct OpRow {
  MPI_Op op;
  const char* name;
  unsigned categories;  // where MPI defines it
};

const std::array<OpRow, 12>& op_table() {
  static const std::array<OpRow, 12> rows = {{
      {MPI_MAX, "MPI_MAX", kCInteger | kFortranInteger | kFloating},
      {MPI_MIN, "MPI_MIN", kCInteger | kFortranInteger | kFloating},
      {MPI_SUM, "MPI_SUM", kCInteger | kFortranInteger | kFloating | kComplex},
      {MPI_PROD, "MPI_PROD", kCInteger | kFortranInteger | kFloating | kComplex},
      {MPI_LAND, "MPI_LAND", kCInteger | kLogical},
      {MPI_LOR, "MPI_LOR", kCInteger | kLogical},
      {MPI_LXOR, "MPI_LXOR", kCInteger | kLogical},
      {MPI_BAND, "MPI_BAND", kCInteger | kFortranInteger | kByte},
      {MPI_BOR, "MPI_BOR", kCInteger | kFortranInteger | kByte},
      {MPI_BXOR, "MPI_BXOR", kCInteger | kFortranInteger | kByte},
      {MPI_MAXLOC, "MPI_MAXLOC", kPair},
      {MPI_MINLOC, "MPI_MINLOC", kPair},
  }};
  return rows;
}

// Identities that hold across processes (the engine compares the mangled
// names of these types): one tag per row of each table.
template <int K>
struct TypeTag {};
template <int K>
struct OpTag {};
struct UserOpTag {};

constexpr int kMaxTypes = 64;
static_assert(kMaxTypes >= 60, "room for every row of type_table()");

template <template <int> class Tag, int... K>
constexpr std::array<const std::type_info*, sizeof...(K)> tags_of(
    std::integer_sequence<int, K...>) {
  return {&typeid(Tag<K>)...};
}

const std::type_info* type_tag(int code) {
  static const auto tags = tags_of<TypeTag>(std::make_integer_sequence<int, kMaxTypes>{});
  return tags[static_cast<std::size_t>(code)];
}

const std::type_info* op_tag(int row) {
  static const auto tags = tags_of<OpTag>(std::make_integer_sequence<int, 12>{});
  return tags[static_cast<std::size_t>(row)];
}

// The compiled op for (native type, op row), when hreduce has one.
template <class T>
bool erase_native(int row, ErasedOp& out) {
  auto use = [&](const auto& op) {
    using Op = std::decay_t<decltype(op)>;
    if constexpr (Op::template accepts<T>) {
      out = erase_op<T>(op);
      return true;
    } else {
      return false;
    }
  };
  switch (row) {
    case 0: return use(op::max);
    case 1: return use(op::min);
    case 2: return use(op::sum);
    case 3: return use(op::prod);
    case 4: return use(op::land);
    case 5: return use(op::lor);
    case 6: return use(op::lxor);
    case 7: return use(op::band);
    case 8: return use(op::bor);
    case 9: return use(op::bxor);
    case 10: return use(op::maxloc);
    default: return use(op::minloc);
  }
}

bool erase_native(Native native, int row, ErasedOp& out) {
  switch (native) {
    case Native::none: return false;
    case Native::schar: return erase_native<signed char>(row, out);
    case Native::uchar: return erase_native<unsigned char>(row, out);
    case Native::shrt: return erase_native<short>(row, out);
    case Native::ushrt: return erase_native<unsigned short>(row, out);
    case Native::int_: return erase_native<int>(row, out);
    case Native::uint: return erase_native<unsigned>(row, out);
    case Native::long_: return erase_native<long>(row, out);
    case Native::ulong: return erase_native<unsigned long>(row, out);
    case Native::llong: return erase_native<long long>(row, out);
    case Native::ullong: return erase_native<unsigned long long>(row, out);
    case Native::flt: return erase_native<float>(row, out);
    case Native::dbl: return erase_native<double>(row, out);
    case Native::cflt: return erase_native<std::complex<float>>(row, out);
    case Native::cdbl: return erase_native<std::complex<double>>(row, out);
    case Native::float_int: return erase_native<float_int>(row, out);
    case Native::double_int: return erase_native<double_int>(row, out);
    case Native::long_int: return erase_native<long_int>(row, out);
    case Native::int_int: return erase_native<int_int>(row, out);
    case Native::short_int: return erase_native<short_int>(row, out);
    case Native::long_double_int: return erase_native<long_double_int>(row, out);
  }
  return false;
}

int find_type(MPI_Datatype type) {
  // Predefined handles never change, so the last one found stays right.
  thread_local MPI_Datatype last = MPI_DATATYPE_NULL;
  thread_local int last_row = -1;
  if (type == last) return last_row;
  const auto& rows = type_table();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k].type == type) {
      last = type;
      last_row = static_cast<int>(k);
      return last_row;
    }
  }
  return -1;
}

int find_op(MPI_Op op) {
  const auto& rows = op_table();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k].op == op) return static_cast<int>(k);
  }
  return -1;
}

// A predefined op on a predefined type (`described` is `type` described):
// its meaning never changes, so its combiner may serve later calls. A
// derived type or user op may be freed and come back under the same handle.
bool lasting_pair(MPI_Op op, const Datatype& described, MPI_Datatype type) {
  return described.base == type && op != MPI_OP_NULL && find_op(op) >= 0;
}

std::size_t extent_of(MPI_Datatype type, MPI_Aint* lb = nullptr) {
  MPI_Aint low = 0, extent = 0;
  PMPI_Type_get_extent(type, &low, &extent);
  if (lb != nullptr) *lb = low;
  return static_cast<std::size_t>(extent);
}

// A contiguous or dup'ed type's name in messages. Open MPI names a dup
// "Dup <the original's name>", which for an unnamed original reads "Dup ":
// only a name the program gave stands.
std::string derived_name(MPI_Datatype type, int combiner, std::size_t count,
                         const std::string& inner) {
  char given[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  PMPI_Type_get_name(type, given, &length);
  const std::string_view name(given, static_cast<std::size_t>(std::max(length, 0)));
  if (!name.empty() && !(combiner == MPI_COMBINER_DUP && name.starts_with("Dup "))) {
    return std::string(name);
  }
  if (combiner == MPI_COMBINER_DUP) return "MPI_Type_dup(" + inner + ")";
  return "MPI_Type_contiguous(" + std::to_string(count) + ", " + inner + ")";
}

}  // namespace

Datatype describe(MPI_Datatype type) {
  Datatype d;
  if (type == MPI_DATATYPE_NULL) {
    d.why_not = "MPI_DATATYPE_NULL";
    return d;
  }
  d.code = find_type(type);
  if (d.code >= 0) {
    d.base = type;
    d.extent = type_table()[static_cast<std::size_t>(d.code)].extent;
    d.name = type_table()[static_cast<std::size_t>(d.code)].name;
    return d;
  }
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    d.why_not = "a predefined datatype outside the library's table";
    return d;
  }
  if (combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP) {
    d.why_not = "a derived datatype other than contiguous or dup (combiner " +
                std::to_string(combiner) + ")";
    return d;
  }
  std::vector<int> ints(static_cast<std::size_t>(integers));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(addresses));
  std::vector<MPI_Datatype> inner(static_cast<std::size_t>(types));
  PMPI_Type_get_contents(type, integers, addresses, types, ints.data(), addrs.data(), inner.data());
  Datatype below = describe(inner[0]);
  // get_contents hands out new handles for derived types, to be freed.
  int inner_integers = 0, inner_addresses = 0, inner_types = 0, inner_combiner = 0;
  PMPI_Type_get_envelope(inner[0], &inner_integers, &inner_addresses, &inner_types,
                         &inner_combiner);
  if (inner_combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&inner[0]);
  if (!below.why_not.empty()) return below;
  const std::size_t count =
      combiner == MPI_COMBINER_CONTIGUOUS ? static_cast<std::size_t>(ints[0]) : 1;
  d = below;
  d.name = derived_name(type, combiner, count, below.name);
  d.multiplicity = below.multiplicity * count;
  MPI_Aint lb = 0;
  d.extent = extent_of(type, &lb);
  if (lb != 0 || d.extent != d.multiplicity * extent_of(below.base)) {
    d.why_not = "a contiguous datatype whose extent was resized";
  }
  return d;
}

namespace {

// The caller's type as messages name it. A predefined op counts elements
// of the predefined type inside; a user op, elements of the caller's type.
std::string type_name_of(const Datatype& type, MPI_Datatype original, const TypeRow& row,
                         bool predefined_op) {
  const bool derived = type.base != original;
  std::string name = !derived        ? type.name
                     : predefined_op ? std::string(row.name) + " (in " + type.name + ")"
                                     : type.name;
  // The node's announcement keeps 63 characters of it (NodeGroup's slot,
  // node_areas.hpp): a longer name is said shorter rather than cut.
  if (name.size() > 63) {
    name = predefined_op ? std::string(row.name) + " (in a derived type)"
                         : std::string("a derived type of ") + row.name;
  }
  return name;
}

// An op applied through PMPI_Reduce_local by `combine` (on `self`), to
// elements of `elem_size` bytes.
void erase_through_mpi(ErasedOp& e, decltype(ErasedOp::combine) combine, const void* self,
                       std::size_t elem_size, bool commutative) {
  e.combine = combine;
  e.op = self;
  e.elem_size = elem_size;
  e.commutative = commutative;
  e.may_throw = false;
}

}  // namespace

Combiner::Combiner(MPI_Op op, const Datatype& type, MPI_Datatype original)
    : op_(op), type_(original) {
  if (!type.why_not.empty()) {
    why_not_ = type.why_not;
    return;
  }
  const TypeRow& row = type_table()[static_cast<std::size_t>(type.code)];
  const int op_row = find_op(op);
  type_name_ = type_name_of(type, original, row, op_row >= 0);
  erased_.type_name = type_name_.c_str();
  if (op == MPI_OP_NULL) {
    why_not_ = "MPI_OP_NULL";
    return;
  }
  if (op_row < 0) {
    // A user op: MPI applies it to elements of the caller's datatype.
    int commutes = 0;
    PMPI_Op_commutative(op, &commutes);
    erase_through_mpi(erased_, &Combiner::reduce_local, this, type.extent, commutes != 0);
    erased_.type = type_tag(type.code);
    erased_.op_type = &typeid(UserOpTag);
    erased_.op_name = "a user op (MPI_Op_create)";
    return;
  }
  const OpRow& o = op_table()[static_cast<std::size_t>(op_row)];
  if ((o.categories & row.category) == 0) {
    why_not_ = std::string(o.name) + " on " + row.name + ", which MPI's op table does not allow";
    return;
  }
  // Predefined ops work element by element on the predefined type inside.
  per_element_ = type.multiplicity;
  type_ = type.base;
  if (!erase_native(row.native, op_row, erased_)) {
    erase_through_mpi(erased_, &Combiner::reduce_local, this, extent_of(type.base), true);
    erased_.op_type = op_tag(op_row);
  }
  erased_.type = type_tag(type.code);
  erased_.type_name = type_name_.c_str();
  erased_.op_name = o.name;
  lasts_ = lasting_pair(op, type, original);
}

const Combiner& combiner_for(MPI_Op op, MPI_Datatype type, std::optional<Combiner>& fresh) {
  struct Kept {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    std::optional<Combiner> combiner;
  };
  constexpr int kKept = 4;
  thread_local Kept kept[kKept];
  thread_local int next = 0;
  for (const Kept& k : kept) {
    if (k.type == type && k.op == op && k.combiner) return *k.combiner;
  }
  const Datatype described = describe(type);
  if (!lasting_pair(op, described, type)) {
    fresh.emplace(op, described, type);
    return *fresh;
  }
  Kept& k = kept[next];
  next = (next + 1) % kKept;
  k.type = type;
  k.op = op;
  k.combiner.emplace(op, described, type);
  return *k.combiner;
}

void Combiner::reduce_local(const void* a, const void* b, void* out, std::size_t n,
                            const void* self) {
  const auto& c = *static_cast<const Combiner*>(self);
  const std::size_t bytes = n * c.erased_.elem_size;
  // MPI's local reduction is inout = in ∘ inout; we want out = a ∘ b.
  auto apply = [&](const void* in, void* inout) {
    auto* to = static_cast<std::byte*>(inout);
    const auto* from = static_cast<const std::byte*>(in);
    for (std::size_t done = 0; done < n;) {
      const std::size_t piece = std::min<std::size_t>(n - done, INT_MAX);
      PMPI_Reduce_local(from + done * c.erased_.elem_size, to + done * c.erased_.elem_size,
                        static_cast<int>(piece), c.type_, c.op_);
      done += piece;
    }
  };
  if (out == a && a != b) {
    thread_local std::vector<std::byte> scratch;
    scratch.resize(bytes);
    copy_bytes(scratch.data(), b, bytes);
    apply(a, scratch.data());
    copy_bytes(out, scratch.data(), bytes);
    return;
  }
  if (out != b) std::memmove(out, b, bytes);
  apply(a, out);
}

}  // namespace hreduce::detail::mpi_dropin
