// Tree reduce and allreduce in shared memory: the generic executor of a
// logical topology (docs/spec.md, "Algorithms") where a "message" is a pointer.
//
// After the arrive barrier every member's input is visible, so a leaf has
// nothing to do: its parent reads the leaf's input in place. A member with
// children combines, in executor order, each child's partial result (the
// child's input if it is a leaf, else the child's working buffer once the
// child's partial_ready word says it is final) into its own accumulator,
// then publishes partial_ready. The tree root accumulates straight into its
// output. Nothing is copied except the final broadcast of allreduce:
//
//   time ─►   leaves          inner members              root
//             (idle)          wait child → combine ...   combine → out
//                             publish partial_ready      publish partial_ready
//   allreduce:  every member copies root.out, publishes done; root waits all
//
// Every member finally waits for the root's partial_ready, which also tells
// it that nobody reads its buffers any more.

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"
#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/engine/collectives.hpp"

namespace hreduce::detail {
namespace {

Schedule make_schedule(const TeamState& team, const CollectiveOptions& options, int root) {
  const int p = team.size();
  switch (options.tree) {
    case TreeShape::hierarchical:
      return schedules::hierarchical(team.topology, team.placement, team.levels, root,
                                     options.radix);
    case TreeShape::binomial: return schedules::binomial(p, root);
    case TreeShape::knomial: return schedules::knomial(p, options.radix, root);
    case TreeShape::binary: return schedules::binary(p, root);
    case TreeShape::flat: return schedules::flat(p, root);
    case TreeShape::chain: return schedules::chain(p, root);
  }
  throw ArgumentError("tree: unknown tree shape");
}

// The plan for this member. A non-commutative op needs rank-contiguous
// subtrees; when the requested tree is not (a scatter placement, a rotated
// root), the reduction runs on a binomial tree rooted at 0, which always is,
// and the result is forwarded to the root.
const TreeRole& plan_for(const CallContext& ctx, int root) {
  const CollectiveOptions& options = *ctx.call.options;
  const bool commutative = ctx.call.op.commutative;
  const auto key =
      std::make_tuple(static_cast<int>(options.tree), options.radix, root, commutative);
  auto found = ctx.me.plans.find(key);
  if (found != ctx.me.plans.end()) return found->second;

  Schedule schedule = make_schedule(ctx.team, options, root);
  if (!commutative && !schedule.is_valid(false)) schedule = schedules::binomial(ctx.size(), 0);
  schedule.validate(commutative);
  TreeRole plan;
  plan.tree_root = schedule.root();
  if (auto out = schedule.outgoing(ctx.me.rank)) plan.parent = out->receiver;
  for (const Transfer& t : schedule.incoming(ctx.me.rank)) {
    plan.children.push_back(t.sender);
    plan.child_has_children.push_back(!schedule.incoming(t.sender).empty());
  }
  return ctx.me.plans.emplace(key, std::move(plan)).first->second;
}

// Combines this member's subtree into `accumulator` (which may be its
// input only when it has no children). Returns the partial result.
const void* combine_subtree(const CallContext& ctx, const TreeRole& plan, void* accumulator) {
  const std::size_t n = ctx.call.count;
  const int rank = ctx.me.rank;
  const void* partial = ctx.call.in;
  for (std::size_t i = 0; i < plan.children.size(); ++i) {
    const int child = plan.children[i];
    MemberControl& control = ctx.team.control(child);
    const void* received = ctx.of(child).in;
    if (plan.child_has_children[i]) {
      ctx.wait_for(control.partial_ready, child, "its partial result");
      received = control.partial;
    }
    if (ctx.team.error_seq.load(std::memory_order_relaxed) == ctx.seq) continue;
    try {
      // The lower rank is the left operand (docs/spec.md: rank order).
      if (child < rank) {
        ctx.call.op.apply(received, partial, accumulator, n);
      } else {
        ctx.call.op.apply(partial, received, accumulator, n);
      }
    } catch (...) {
      ctx.record_failure(current_exception_text());
    }
    partial = accumulator;
  }
  return partial;
}

void publish_partial(const CallContext& ctx, const void* partial) {
  MemberControl& mine = ctx.team.control(ctx.me.rank);
  mine.partial = partial;
  publish(mine.partial_ready, ctx.seq, ctx.team.waiting);
}

}  // namespace

void tree_reduce(const CallContext& ctx) {
  const int root = ctx.call.root;
  const TreeRole& plan = plan_for(ctx, root);
  const std::size_t bytes = ctx.call.count * ctx.call.op.elem_size;
  const int rank = ctx.me.rank;
  if (!plan.children.empty() || rank == plan.tree_root) {
    // The result member accumulates into its output; anyone else into its
    // scratch, since its output must stay untouched.
    void* accumulator = rank == root ? ctx.call.out : ctx.me.scratch(0, bytes);
    const void* partial = combine_subtree(ctx, plan, accumulator);
    if (rank == plan.tree_root && partial != accumulator)
      copy_if_distinct(accumulator, partial, bytes);
    publish_partial(ctx, accumulator);
  }
  MemberControl& top = ctx.team.control(plan.tree_root);
  ctx.wait_for(top.partial_ready, plan.tree_root, "the reduced result");
  if (rank == root && root != plan.tree_root) copy_if_distinct(ctx.call.out, top.partial, bytes);
  ctx.throw_if_failed();
}

void tree_allreduce(const CallContext& ctx) {
  const TreeRole& plan = plan_for(ctx, 0);
  const std::size_t bytes = ctx.call.count * ctx.call.op.elem_size;
  const int rank = ctx.me.rank;
  if (!plan.children.empty() || rank == plan.tree_root) {
    // Every output receives the result anyway, so it is the accumulator.
    const void* partial = combine_subtree(ctx, plan, ctx.call.out);
    copy_if_distinct(ctx.call.out, partial, bytes);
    publish_partial(ctx, ctx.call.out);
  }
  MemberControl& top = ctx.team.control(plan.tree_root);
  if (rank != plan.tree_root) {
    ctx.wait_for(top.partial_ready, plan.tree_root, "the reduced result");
    copy_if_distinct(ctx.call.out, top.partial, bytes);
    publish(ctx.team.control(rank).done, ctx.seq, ctx.team.waiting);
  } else {
    // The root's output is the application's buffer: keep it until every
    // member has copied it.
    for (int r = 0; r < ctx.size(); ++r) {
      if (r != rank) ctx.wait_for(ctx.team.control(r).done, r, "copying the result");
    }
  }
  ctx.throw_if_failed();
}

}  // namespace hreduce::detail
