#include "src/node/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hreduce::detail {
namespace {

long membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

}  // namespace

bool register_asymmetric_fence() {
  static const bool registered = [] {
    const long offered = membarrier(MEMBARRIER_CMD_QUERY);
    constexpr long kNeeded =
        MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    return offered >= 0 && (offered & kNeeded) == kNeeded &&
           membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  }();
  return registered;
}

void asymmetric_fence_heavy() { membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED); }

}  // namespace hreduce::detail
