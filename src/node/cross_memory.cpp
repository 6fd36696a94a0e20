#include "src/node/cross_memory.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <mutex>

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

bool read_process_memory(int pid, const void* remote, void* local, std::size_t bytes,
                         std::string& why) {
  auto* to = static_cast<char*>(local);
  auto* from = static_cast<char*>(const_cast<void*>(remote));
  while (bytes > 0) {
    iovec mine{to, bytes}, theirs{from, bytes};
    const ssize_t got = process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      why = "process_vm_readv from process " + std::to_string(pid) +
            " failed: " + (got < 0 ? std::strerror(errno) : "no bytes read");
      return false;
    }
    // A partial read stops at the end of a mapped range: go on from there
    // (the next call fails if nothing follows).
    to += got;
    from += got;
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace hreduce::detail
