#include "src/common/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/common/environment.hpp"

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

bool use_asymmetric_fence() {
  return flag_from_environment("HREDUCE_NODE_ASYMMETRIC_FENCE", true) &&
         register_asymmetric_fence();
}

void asymmetric_fence_heavy() { membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED); }

namespace {

// A process that already runs several threads registers only after an RCU
// grace period (the kernel's sync_runqueues_membarrier_state): 12 ms under
// Open MPI, which starts threads in MPI_Init, on a 2-vCPU VM, most of a
// communicator's first team build. With one thread it is one system call.
// So a process registers as the library loads, before main; registration
// is kept across fork(2).
[[gnu::constructor]] void register_before_threads_start() { (void)use_asymmetric_fence(); }

}  // namespace

}  // namespace hreduce::detail
