// Internal: the type-erased description of one collective call that the
// templates in team.hpp hand to the compiled engine. Not part of the API.
#pragma once

// Only hreduce's public headers include this one (they define the macro).
#ifndef HREDUCE_PUBLIC_HEADER
#error "hreduce/detail/call.hpp is internal: include \"hreduce/team.hpp\" instead"
#endif

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <type_traits>
#include <typeinfo>

#include "hreduce/combine.hpp"
#include "hreduce/options.hpp"

namespace hreduce::detail {

enum class CollectiveKind : std::uint8_t {
  barrier,
  reduce,
  allreduce,
  reduce_scatter,
  reduce_scatter_block,
  scan,
  exscan,
};

const char* to_string(CollectiveKind kind);

// The public Collective's kinds follow barrier in the same order.
constexpr CollectiveKind kind_of(Collective collective) {
  return static_cast<CollectiveKind>(static_cast<int>(collective) + 1);
}
constexpr Collective collective_of(CollectiveKind kind) {
  return static_cast<Collective>(static_cast<int>(kind) - 1);
}
static_assert(kind_of(Collective::reduce) == CollectiveKind::reduce &&
              kind_of(Collective::reduce_scatter) == CollectiveKind::reduce_scatter &&
              kind_of(Collective::exscan) == CollectiveKind::exscan);

// out[i] = a[i] ∘ b[i] on raw memory, for one (T, Op) pair.
using CombineFn = void (*)(const void* a, const void* b, void* out, std::size_t n, const void* op);

struct ErasedOp {
  CombineFn combine = nullptr;
  const void* op = nullptr;  // the caller's op object, alive for the call
  std::size_t elem_size = 0;
  bool commutative = true;
  // Identity of the element type and of the op type, compared across members.
  const std::type_info* type = nullptr;
  const std::type_info* op_type = nullptr;
  const char* op_name = "";
  // Predefined ops never throw; a user op may.
  bool may_throw = true;
  // How messages between processes name the element type (the MPI
  // drop-in's "MPI_DOUBLE"); null: `type`'s own name.
  const char* type_name = nullptr;

  void apply(const void* a, const void* b, void* out, std::size_t n) const {
    combine(a, b, out, n, op);
  }
  // The same op on the same object, field by field (names by address).
  bool operator==(const ErasedOp&) const = default;
};

template <class T, class Op>
void combine_erased(const void* a, const void* b, void* out, std::size_t n, const void* op) {
  combine(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), n,
          *static_cast<const Op*>(op));
}

template <class T, class Op>
ErasedOp erase_op(const Op& op) {
  check_op<Op, T>();
  return {&combine_erased<T, Op>,
          &op,
          sizeof(T),
          is_commutative(op),
          &typeid(T),
          &typeid(Op),
          op_name(op).data(),
          !is_predefined_op_v<Op>,
          nullptr};
}

inline constexpr CollectiveOptions kDefaultCollectiveOptions{};

// The last argument of every collective: a CollectiveOptions, or nothing for
// the team's defaults. It only points at the caller's options, which live
// until the call returns.
class OptionsRef {
 public:
  OptionsRef() = default;
  OptionsRef(const CollectiveOptions& options) : options_(&options) {}  // implicit on purpose
  const CollectiveOptions* get() const { return options_; }

 private:
  const CollectiveOptions* options_ = nullptr;
};

// What the range forms of the collectives accept: contiguous and sized
// (std::vector, std::array, C arrays, std::span).
template <class R>
concept InputRange = std::ranges::contiguous_range<std::remove_reference_t<R>> &&
    std::ranges::sized_range<std::remove_reference_t<R>>;

template <class R>
concept InOutRange = InputRange<R> && !std::is_const_v<
    std::remove_reference_t<std::ranges::range_reference_t<std::remove_reference_t<R>>>>;

// A writable range of In's element type.
template <class R, class In>
concept OutputRangeOf =
    InOutRange<R> && std::same_as<std::ranges::range_value_t<std::remove_reference_t<R>>,
                                  std::ranges::range_value_t<std::remove_reference_t<In>>>;

// What the steps of a team spanning processes add to a call
// (src/engine/process_step.hpp).
struct ProcessStep;

// A user's call, as the templates of team.hpp hand it to the compiled
// engine, which runs it as it is (its Call is this type): a copy on entry
// had to wait for the caller's fresh stores to reach the cache, as wide
// loads over several narrow stores cannot take their values from the store
// buffer (a third of a one-member call's time).
struct CallArgs {
  CallArgs() = default;
  // Every field in one go: aggregate initialization would first zero the
  // whole object, padding included (measured: a `rep stos` per call).
  CallArgs(CollectiveKind kind, const void* in, void* out, std::size_t count,
           const std::size_t* counts, std::size_t in_size, std::size_t out_size, int root,
           const ErasedOp& op, const CollectiveOptions& options)
      : kind(kind), in(in), out(out), count(count), counts(counts), in_size(in_size),
        out_size(out_size), root(root), op(op), options(&options), step(nullptr) {}

  CollectiveKind kind = CollectiveKind::barrier;
  const void* in = nullptr;
  void* out = nullptr;
  // Elements per member (reduce, allreduce, scan, exscan), the block size m
  // (reduce_scatter_block), or the number of counts given (reduce_scatter).
  std::size_t count = 0;
  const std::size_t* counts = nullptr;  // reduce_scatter only
  // Buffer sizes in elements when the caller passed spans (checked by the
  // engine); SIZE_MAX for the pointer forms, which cannot be checked.
  std::size_t in_size = SIZE_MAX;
  std::size_t out_size = SIZE_MAX;
  int root = 0;
  ErasedOp op;
  // The caller's options, alive for the call: pointing at them saves a copy
  // on every call.
  const CollectiveOptions* options = &kDefaultCollectiveOptions;
  // Set only by the steps of a team spanning processes; null in a user's call.
  const ProcessStep* step = nullptr;
};

}  // namespace hreduce::detail
