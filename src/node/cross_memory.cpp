#include "src/node/cross_memory.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

namespace hreduce::detail {

void allow_cross_memory_reads() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef PR_SET_PTRACER
    // EINVAL without Yama: nothing to allow then.
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  });
}

namespace {

// process_vm_readv or process_vm_writev until all `bytes` moved: a partial
// transfer stops at the end of a mapped range, and the next call fails if
// nothing follows.
template <class Transfer>
bool transfer_all(Transfer transfer, const char* name, int pid, char* local, char* remote,
                  std::size_t bytes, std::string& why) {
  while (bytes > 0) {
    iovec mine{local, bytes}, theirs{remote, bytes};
    const ssize_t moved = transfer(pid, &mine, 1UL, &theirs, 1UL, 0UL);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      why = std::string(name) + " with process " + std::to_string(pid) +
            " failed: " + (moved < 0 ? std::strerror(errno) : "nothing moved");
      return false;
    }
    local += moved;
    remote += moved;
    bytes -= static_cast<std::size_t>(moved);
  }
  return true;
}

}  // namespace

bool read_process_memory(int pid, const void* remote, void* local, std::size_t bytes,
                         std::string& why) {
  return transfer_all(process_vm_readv, "process_vm_readv", pid, static_cast<char*>(local),
                      static_cast<char*>(const_cast<void*>(remote)), bytes, why);
}

bool write_process_memory(int pid, void* remote, const void* local, std::size_t bytes,
                          std::string& why) {
  return transfer_all(process_vm_writev, "process_vm_writev", pid,
                      static_cast<char*>(const_cast<void*>(local)), static_cast<char*>(remote),
                      bytes, why);
}

}  // namespace hreduce::detail
