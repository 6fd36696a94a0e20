// The asymmetric fence's registration (asymmetric_fence.hpp) happens as the
// library loads, before main, while a process still has one thread and
// registering is one system call; nowhere where the fence is turned off.
// Each case runs in a fresh process (this binary again, with a hidden
// case), so that nothing of the library has run in it before it looks.
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>

#include "src/common/asymmetric_fence.hpp"

namespace {

// MEMBARRIER_CMD_GET_REGISTRATIONS (Linux 6.3), spelled out for older headers.
constexpr int kGetRegistrations = 1 << 9;

long membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

bool kernel_tells_registrations() {
  const long offered = membarrier(MEMBARRIER_CMD_QUERY);
  return offered >= 0 && (offered & kGetRegistrations) != 0;
}

bool kernel_offers_the_fence() {
  const long offered = membarrier(MEMBARRIER_CMD_QUERY);
  constexpr long kNeeded =
      MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
  return offered >= 0 && (offered & kNeeded) == kNeeded;
}

bool registered_now() {
  return (membarrier(kGetRegistrations) & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0;
}

// Runs the hidden case in a fresh process with the fence variable set to
// `setting` (null: unset); its exit status (0: passed).
int fresh_process(const char* setting) {
  const pid_t child = fork();
  if (child == 0) {
    if (setting == nullptr) {
      unsetenv("HREDUCE_NODE_ASYMMETRIC_FENCE");
    } else {
      setenv("HREDUCE_NODE_ASYMMETRIC_FENCE", setting, 1);
    }
    // -w NoTests: a name that matched no case fails instead of passing.
    execl("/proc/self/exe", "/proc/self/exe", "-w", "NoTests",
          "registered at load in a fresh process", nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

TEST_CASE("registered at load in a fresh process", "[.][node]") {
  // The first thing this process does: has it registered already?
  const bool registered = registered_now();
  const char* setting = std::getenv("HREDUCE_NODE_ASYMMETRIC_FENCE");
  const bool off = setting != nullptr && std::strcmp(setting, "off") == 0;
  CHECK(registered == (!off && kernel_offers_the_fence()));
  CHECK(hreduce::detail::use_asymmetric_fence() == registered);
}

TEST_CASE("a process registers for the asymmetric fence as the library loads", "[node]") {
  if (!kernel_tells_registrations()) {
    WARN("this kernel cannot tell a process's membarrier registrations (Linux < 6.3): not checked");
    return;
  }
  CHECK(fresh_process(nullptr) == 0);
  CHECK(fresh_process("off") == 0);
}
