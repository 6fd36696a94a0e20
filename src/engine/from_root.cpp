// Two steps that multi-process teams (src/hybrid/) build their collectives
// from, once a process's leader (member 0) holds the inter-process result:
//
//   copy_from_root     member r copies its piece root.in[offset, offset+count)
//                      into its output (all of it for allreduce, one member's
//                      for reduce, each member's block for reduce_scatter)
//   combine_from_root  member r computes out = root.in ∘ out (the prefix of
//                      lower processes on the left), or copies root.in, for
//                      scan and exscan
//
// Every member works on its own output in parallel, then all wait for each
// other: the root's buffer may be the application's and must outlive every
// reader.
#include "src/common/copy.hpp"
#include "src/common/exception_text.hpp"
#include "src/engine/collectives.hpp"
#include "src/engine/process_step.hpp"

namespace hreduce::detail {
void copy_from_root(const CallContext& ctx) {
  const std::size_t es = ctx.call.op.elem_size;
  const void* source = ctx.of(ctx.call.root).in;
  if (ctx.call.count > 0) {
    copy_if_distinct(ctx.call.out, bytes_at(source, ctx.call.step->offset, es),
                     ctx.call.count * es);
  }
  ctx.finish_together("taking its piece");
}

void combine_from_root(const CallContext& ctx) {
  const void* prefix = ctx.of(ctx.call.root).in;
  if (ctx.call.count > 0) {
    if (ctx.call.step->copy_only) {
      copy_if_distinct(ctx.call.out, prefix, ctx.call.count * ctx.call.op.elem_size);
    } else {
      try {
        ctx.call.op.apply(prefix, ctx.call.out, ctx.call.out, ctx.call.count);
      } catch (...) {
        ctx.record_failure(current_exception_text());
      }
    }
  }
  ctx.finish_together("taking its piece");
  ctx.throw_if_failed();
}

}  // namespace hreduce::detail
