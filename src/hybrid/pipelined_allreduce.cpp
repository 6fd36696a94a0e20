// A long allreduce, with messages only or with the node level: the three
// steps overlap chunk by chunk (src/engine/pipeline.cpp); each reduced
// chunk comes back here on the leader (on_chunk), which combines it across
// processes while the members reduce the next.
#include <algorithm>

#include "src/hybrid/hybrid_call.hpp"

namespace hreduce::detail {

void HybridCall::allreduce_pipelined() {
  const std::size_t n = call_.count;
  Call c = base(kPipelinedAllreduce);
  step_.chunk =
      std::max<std::size_t>(1, group_.options().pipeline_chunk_bytes / call_.op.elem_size);
  step_.on_chunk = [](void* self, void* data, std::size_t count) {
    static_cast<HybridCall*>(self)->on_chunk(data, count);
  };
  step_.on_chunk_context = this;
  local(c);
  if (leader_ && group_.node() != nullptr) {
    if (!agreed_) {
      node_allreduce(nullptr, std::min(n, step_.chunk));  // failed before any chunk
    } else if (!failure_ && call_.op.may_throw) {
      node_status_round(local_failure_);
    }
  } else if (leader_) {
    over_messages([&] {
      if (!agreed_) {
        agree(n);  // step 1 failed before any chunk: tell the others
      } else if (!failure_) {
        confirm(n);
      }
    });
  }
  finish_copy(nullptr, nullptr, 0, 0);
}

void HybridCall::on_chunk(void* data, std::size_t count) {
  if (group_.node() != nullptr) {
    agreed_ = true;
    if (!failure_) node_allreduce(data, count);
    return;
  }
  over_messages([&] {
    if (!agreed_) agree(call_.count);
    if (!failure_) allreduce_between_processes(data, count);
  });
}

}  // namespace hreduce::detail
