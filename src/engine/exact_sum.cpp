// The exact sum. Every finite float or double is an integer times a power
// of two, so the sum of a call's values is an integer on the grid of the
// smallest power any of them uses. Integer addition is associative and
// commutative: once every member has written its values as integers on one
// grid, the engine's ordinary collective (any path, any layout, any
// bracketing) adds them without error, and each receiving member rounds its
// integers back once, to nearest, ties to even.
//
//   1. agree on the grid: an allreduce (max) of the highest leading bit and
//      the lowest last mantissa bit that the values' exponents allow, over
//      all values of all members, and whether any is NaN, ±∞ or −0;
//   2. the user's collective over integers of W 64-bit words per value, W
//      just large enough for the highest bit, 31 bits of headroom (2^31
//      members cannot overflow it) and the sign;
//   3. round back.
//
// W follows the data: doubles whose exponents lie within 43 binades of
// each other need 2 words (16 B per double), the whole double range, from
// 2^-1074 to 2^1023, 34. A binned sum (ReproBLAS) runs in one pass with a
// fixed few words per value, but drops the bits below its window
// (1e308 − 1e308 + 1e-300 gives 0 there), as a fixed-point sum with a chosen
// window (as climate models use) does too. This one is exact for every
// input, and pays for a wide exponent range only in calls that have one.
//
// A team of one or two members skips all of it: one IEEE addition is
// already correctly rounded (run_pair_sum). Short vectors skip the
// agreement (run_gathered_sum), and long allreduces and reduces round in
// blocks (reduce_in_blocks).
//
// Non-finite values: NaN anywhere, or +∞ and −∞ together, give a NaN (its
// sign and payload are not promised); otherwise ±∞ gives ±∞. A finite sum
// beyond the largest finite value rounds to ±∞, and an exact zero is −0.0
// only when every value is −0.0, as IEEE addition gives them.
#include "src/engine/exact_sum.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

#include "hreduce/ops.hpp"
#include "src/common/failure.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/exact_integers.hpp"
#include "src/engine/exact_rounding.hpp"
#include "src/engine/team_state.hpp"

namespace hreduce::detail {
namespace {

using namespace exact;

// The op of step 2 (its type names it in messages).
struct ExactIntegerSum {};

// A long allreduce or reduce: rounding is the dearest step of the
// conversions, and every member (a reduce's root) would round the whole
// vector. Instead a reduce_scatter of the integers gives each member one
// block to round, and an allreduce (a reduce) with `bor` of the rounded
// blocks, zeros elsewhere, hands every member (the root) all of them, bit
// for bit (one contributor per element). Below 32 KiB the extra
// synchronisation costs more than it saves.
constexpr std::size_t kRoundInBlocksBytes = 32 * 1024;

template <class F>
bool rounds_in_blocks(const Call& call, int size, int values) {
  return (call.kind == CollectiveKind::allreduce || call.kind == CollectiveKind::reduce) &&
         size >= 3 &&
         call.count * static_cast<std::size_t>(values) * sizeof(F) >= kRoundInBlocksBytes;
}

template <class F>
void reduce_in_blocks(MemberState& me, const Call& call, Call sum, const Layout& layout,
                      const ProcessStep& step, const CollectiveOptions& plain) {
  const int size = me.team.total_members, rank = me.global_rank;
  const std::size_t n = call.count;
  // Kept per thread: a steady stream of calls allocates nothing.
  thread_local std::vector<std::size_t> counts;
  counts.assign(static_cast<std::size_t>(size), n / static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < n % static_cast<std::size_t>(size); ++r) ++counts[r];
  std::size_t offset = 0;
  for (int r = 0; r < rank; ++r) offset += counts[r];
  const auto values = static_cast<std::size_t>(layout.values);
  sum.kind = CollectiveKind::reduce_scatter;
  sum.count = static_cast<std::size_t>(size);
  sum.counts = counts.data();
  sum.root = 0;
  sum.out = me.scratch(
      4, std::max<std::size_t>(counts[rank] * values, 1) * layout.stride() * sizeof(Word));
  execute_call(me, sum);

  // A reduce's other members round their block beside.
  const bool to_root = call.kind == CollectiveKind::reduce;
  thread_local std::vector<F> beside;
  if (to_root && rank != call.root) beside.resize(n * values);
  F* out = to_root && rank != call.root ? beside.data() : static_cast<F*>(call.out);
  std::fill(out, out + offset * values, F(0));
  convert_out(static_cast<const Word*>(sum.out), counts[rank] * values, layout,
              out + offset * values);
  std::fill(out + (offset + counts[rank]) * values, out + n * values, F(0));
  using Bits = typename Format<F>::Bits;
  Call gather(CallArgs(call.kind, out, out, n * values, nullptr, SIZE_MAX, SIZE_MAX,
                       to_root ? call.root : 0, erase_op<Bits>(op::bor), plain));
  gather.step = &step;
  execute_call(me, gather);
}

// Short vectors: the agreement round and the integer collective take two or
// three synchronisations where run_to_run takes one. Instead every member
// gathers all inputs in one call (an allreduce, or a reduce to the root,
// with `bor` over p slots, each member's input in its own) and sums what
// its result needs itself, exactly: the same bits, since the correctly
// rounded sum is one. Up to 4 KiB gathered, the size of a few mailbox
// calls.
constexpr std::size_t kGatherBytes = 4096;

template <class F>
bool sums_gathered(const Call& call, int size, int values) {
  const bool plain_vector =
      call.kind == CollectiveKind::allreduce || call.kind == CollectiveKind::reduce ||
      call.kind == CollectiveKind::scan || call.kind == CollectiveKind::exscan;
  // The count first: a wrong one (an argument error still to report) must
  // not overflow the product.
  return plain_vector && call.count <= kGatherBytes &&
         static_cast<std::size_t>(size) * call.count * static_cast<std::size_t>(values) *
                 sizeof(F) <=
             kGatherBytes;
}

template <class F>
void run_gathered_sum(MemberState& me, const Call& call, int values, const ProcessStep& step,
                      const CollectiveOptions& plain, bool ok) {
  const int size = me.team.total_members, rank = me.global_rank;
  const std::size_t per_member = call.count * static_cast<std::size_t>(values);
  using Bits = typename Format<F>::Bits;
  // Kept per thread: a steady stream of calls allocates nothing.
  thread_local std::vector<F> all;
  all.assign(per_member * static_cast<std::size_t>(size), F(0));
  if (ok) std::copy_n(static_cast<const F*>(call.in), per_member, all.data() + per_member * rank);
  const bool to_root = call.kind == CollectiveKind::reduce;
  Call gather(CallArgs(to_root ? CollectiveKind::reduce : CollectiveKind::allreduce, all.data(),
                       all.data(), all.size(), nullptr, SIZE_MAX, SIZE_MAX, to_root ? call.root : 0,
                       erase_op<Bits>(op::bor), plain));
  gather.step = &step;
  execute_call(me, gather);

  // The members whose inputs this member's result sums: [0, upto).
  int upto = size;
  if (call.kind == CollectiveKind::reduce && rank != call.root) upto = 0;
  if (call.kind == CollectiveKind::scan) upto = rank + 1;
  if (call.kind == CollectiveKind::exscan) upto = rank;
  if (upto == 0 || per_member == 0) return;
  Summary summary;
  summarize(all.data(), per_member * static_cast<std::size_t>(upto), summary);
  const Layout layout = layout_of(summary, values);
  const std::size_t stride_bytes = static_cast<std::size_t>(layout.stride()) * sizeof(Word);
  auto* sum = static_cast<Word*>(me.scratch(3, per_member * stride_bytes));
  auto* term = static_cast<Word*>(me.scratch(4, per_member * stride_bytes));
  convert_in(all.data(), per_member, layout, sum);
  for (int q = 1; q < upto; ++q) {
    convert_in(all.data() + per_member * q, per_member, layout, term);
    add_integers(sum, term, sum, call.count, &layout);
  }
  convert_out(sum, per_member, layout, static_cast<F*>(call.out));
}

// Step 2's call: the user's collective over integers of `layout`, from
// `ints_in` into `ints_out`.
Call integer_sum(const Call& call, const Layout& layout, Word* ints_in, Word* ints_out,
                 const CollectiveOptions& plain, const ProcessStep& step) {
  Call sum = call;
  sum.in = ints_in;
  sum.out = ints_out;
  sum.in_size = SIZE_MAX;
  sum.out_size = SIZE_MAX;
  sum.op.combine = &add_integers;
  sum.op.op = &layout;
  sum.op.elem_size = layout.values * static_cast<std::size_t>(layout.stride()) * sizeof(Word);
  sum.op.commutative = true;
  sum.op.op_type = &typeid(ExactIntegerSum);  // the user's element type stays, for messages
  sum.op.op_name = "sum (exact)";
  sum.op.may_throw = false;
  sum.options = &plain;
  sum.step = &step;
  return sum;
}

template <class F>
void run_exact_sum(MemberState& me, const Call& call, int values) {
  TeamState& team = me.team;
  const int size = team.total_members, rank = me.global_rank;
  CollectiveOptions plain = *call.options;
  plain.reproducibility = Reproducibility::run_to_run;
  // Both steps are named after the user's collective in messages, and a
  // member with bad arguments fails step 1 on every member.
  ProcessStep step;
  step.reported_as = &call.kind;
  step.asked_level = &call.options->reproducibility;
  const std::string problem = member_problem(call, rank, size, team.options.collectives);
  Failure relayed;
  if (!problem.empty()) {
    relayed = Failure::of(ErrorKind::argument, std::string(to_string(call.kind)) + ": member " +
                                                   std::to_string(rank) + ": " + problem);
    step.relayed = &relayed;
  }

  if (sums_gathered<F>(call, size, values)) {
    run_gathered_sum<F>(me, call, values, step, plain, problem.empty());
    return;
  }
  const std::size_t in_values = problem.empty() ? input_elements(call, size) * values : 0;
  Summary mine, all;
  summarize(static_cast<const F*>(call.in), in_values, mine);
  Call agree(CallArgs(CollectiveKind::allreduce, &mine, &all,
                      sizeof(Summary) / sizeof(std::int64_t), nullptr, SIZE_MAX, SIZE_MAX, 0,
                      erase_op<std::int64_t>(op::max), plain));
  agree.step = &step;
  execute_call(me, agree);

  const Layout layout = layout_of(all, values);
  const std::size_t stride_bytes = static_cast<std::size_t>(layout.stride()) * sizeof(Word);
  const std::size_t out_values = output_elements(call, rank) * values;
  auto* ints_in =
      static_cast<Word*>(me.scratch(3, std::max<std::size_t>(in_values, 1) * stride_bytes));
  auto* ints_out =
      out_values > 0 ? static_cast<Word*>(me.scratch(4, out_values * stride_bytes)) : nullptr;
  convert_in(static_cast<const F*>(call.in), in_values, layout, ints_in);
  const Call sum = integer_sum(call, layout, ints_in, ints_out, plain, step);
  if (rounds_in_blocks<F>(call, size, values)) {
    reduce_in_blocks<F>(me, call, sum, layout, step, plain);
    return;
  }
  execute_call(me, sum);
  convert_out(ints_out, out_values, layout, static_cast<F*>(call.out));
}

// A team of one or two members: every result is one value or one IEEE
// addition of two, which is already the correctly rounded sum (overflow,
// infinities, NaN and the sign of zero included): the ordinary collective.
void run_pair_sum(MemberState& me, const Call& call) {
  CollectiveOptions plain = *call.options;
  plain.reproducibility = Reproducibility::run_to_run;
  Call sum = call;
  sum.options = &plain;
  execute_call(me, sum);
}

template <class F>
void run_exact(MemberState& me, const Call& call, int values) {
  if (me.team.total_members <= 2) {
    run_pair_sum(me, call);
  } else {
    run_exact_sum<F>(me, call, values);
  }
}

}  // namespace

bool exact_sum_applies(const ErasedOp& op) {
  if (op.op_type == nullptr || op.type == nullptr || *op.op_type != typeid(op::sum_t)) {
    return false;
  }
  const std::type_info& t = *op.type;
  return t == typeid(float) || t == typeid(double) || t == typeid(std::complex<float>) ||
         t == typeid(std::complex<double>);
}

void execute_exact_sum(MemberState& me, const Call& call) {
  const std::type_info& t = *call.op.type;
  if (t == typeid(double)) return run_exact<double>(me, call, 1);
  if (t == typeid(std::complex<double>)) return run_exact<double>(me, call, 2);
  if (t == typeid(float)) return run_exact<float>(me, call, 1);
  run_exact<float>(me, call, 2);
}

}  // namespace hreduce::detail
