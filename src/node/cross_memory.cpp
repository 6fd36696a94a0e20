#include "src/node/cross_memory.hpp"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "src/common/copy.hpp"

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

namespace {

// -1: not timed yet; else the answer.
std::atomic<int> kernel_crawl_answer{-1};

bool time_kernel_crawl() {
  constexpr std::size_t kBytes = 16 * 1024;
  constexpr int kRounds = 7;
  std::vector<std::byte> memory(2 * kBytes + 4096 + 128, std::byte{1});
  std::byte* from = memory.data();
  std::byte* to = from + kBytes + 4096;  // a whole number of pages past it
  std::string why;
  const int self = static_cast<int>(getpid());
  // Best of kRounds each way, in turns: a time slice lost lands in one round.
  double same_offset = 1e300, crawling = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    for (std::byte* into : {to, to + 16}) {
      const auto start = std::chrono::steady_clock::now();
      if (!read_process_memory(self, from, into, kBytes, why)) return false;
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double& best = into == to ? same_offset : crawling;
      best = std::min(best, took);
    }
  }
  return crawling > 1.5 * same_offset;
}

}  // namespace

bool kernel_copies_crawl_misaligned() {
  int answer = kernel_crawl_answer.load(std::memory_order_relaxed);
  if (answer < 0) {
    answer = time_kernel_crawl() ? 1 : 0;
    kernel_crawl_answer.store(answer, std::memory_order_relaxed);
  }
  return answer == 1;
}

void set_kernel_copies_crawl_misaligned(std::optional<bool> answer) {
  kernel_crawl_answer.store(answer ? (*answer ? 1 : 0) : -1, std::memory_order_relaxed);
}

}  // namespace hreduce::detail
