// Every collective kind's name, the internal steps' included.
#include "src/common/collective_kind.hpp"

#include "src/common/names.hpp"

namespace hreduce::detail {

const char* to_string(CollectiveKind kind) {
  if (kind == CollectiveKind::barrier) return "barrier";
  if (kind == kCopyFromRoot) return "copy_from_root";
  if (kind == kCombineFromRoot) return "combine_from_root";
  if (kind == kPipelinedAllreduce) return "allreduce";
  return enum_name(kCollectiveNames, collective_of(kind));
}

}  // namespace hreduce::detail
