// Two costs between processes of one node, in a forked child: what one
// process_vm_readv costs (the node level's single copy is built of them),
// fixed and per KiB, and how long a process blocked in FUTEX_WAIT on a
// shared word takes to answer another's FUTEX_WAKE (the node level's waits
// across processes). bench/cross_process_floor times whole transfers.
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/error.hpp"
#include "src/probe/measurements.hpp"

namespace hreduce::detail::probe {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::array<std::size_t, 6> kReadSizes = {64, 4096, 16384, 65536, 262144, 1 << 20};
constexpr int kBlocks = 5;
constexpr double kWakeDeadlineSeconds = 10;

struct Shared {
  alignas(64) std::atomic<std::uint32_t> start{0}, reads_done{0}, go{0}, answered{0};
  int read_errno = 0;
  double read_seconds[kReadSizes.size()] = {};
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}

// Median over blocks of one process_vm_readv of `bytes` from the parent.
double time_read(pid_t parent, const std::byte* remote, std::byte* local, std::size_t bytes,
                 double seconds, int& error) {
  iovec mine{local, bytes}, theirs{const_cast<std::byte*>(remote), bytes};
  auto read_once = [&] {
    if (process_vm_readv(parent, &mine, 1, &theirs, 1, 0) != static_cast<ssize_t>(bytes)) {
      error = errno != 0 ? errno : EIO;
    }
  };
  const auto warm = Clock::now();
  long calls = 0;
  for (; calls < 4 || seconds_since(warm) < seconds / (kBlocks + 1); ++calls) read_once();
  if (error != 0) return 0;
  const long per_block = std::max(1L, calls);
  std::vector<double> blocks;
  for (int b = 0; b < kBlocks; ++b) {
    const auto start = Clock::now();
    for (long c = 0; c < per_block; ++c) read_once();
    blocks.push_back(seconds_since(start) / static_cast<double>(per_block));
  }
  return median(blocks);
}

[[noreturn]] void child(Shared& shared, pid_t parent, const std::byte* remote, int wakes,
                        double seconds) {
  while (shared.start.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  std::vector<std::byte> local(kReadSizes.back());
  for (std::size_t i = 0; i < kReadSizes.size() && shared.read_errno == 0; ++i) {
    shared.read_seconds[i] = time_read(parent, remote, local.data(), kReadSizes[i],
                                       seconds / kReadSizes.size(), shared.read_errno);
  }
  shared.reads_done.store(1, std::memory_order_release);
  for (std::uint32_t i = 1; i <= static_cast<std::uint32_t>(wakes); ++i) {
    for (std::uint32_t seen = shared.go.load(); seen < i; seen = shared.go.load()) {
      futex(shared.go, FUTEX_WAIT, seen);
    }
    shared.answered.store(i, std::memory_order_release);
  }
  _exit(0);
}

void pin(const Topology& topology, int pu) {
  if (pu < topology.pu_count()) bind_current_thread(topology, pu);
}

// Least squares over every size for the slope; the fixed cost is what is
// left of the smallest read.
void fit_reads(const Shared& shared, CrossProcess& out) {
  if (shared.read_errno != 0) {
    out.vm_readv_unavailable = std::string("process_vm_readv: ") + std::strerror(shared.read_errno);
    return;
  }
  const double n = kReadSizes.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < kReadSizes.size(); ++i) {
    const double x = kReadSizes[i] / 1024.0, y = shared.read_seconds[i];
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  out.vm_readv_seconds_per_kib =
      slope > 0 ? slope : shared.read_seconds[kReadSizes.size() - 1] / (kReadSizes.back() / 1024.0);
  const double fixed =
      shared.read_seconds[0] - *out.vm_readv_seconds_per_kib * kReadSizes[0] / 1024.0;
  out.vm_readv_fixed_seconds = fixed > 0 ? fixed : shared.read_seconds[0];
}

// The parent's side of the wake-ups: each after 500 µs of quiet, so that
// the child is asleep in the kernel, not spinning.
std::vector<double> wake_child(Shared& shared, int wakes) {
  std::vector<double> took;
  for (std::uint32_t i = 1; i <= static_cast<std::uint32_t>(wakes); ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    const auto start = Clock::now();
    shared.go.store(i, std::memory_order_release);
    futex(shared.go, FUTEX_WAKE, 1);
    while (shared.answered.load(std::memory_order_acquire) < i) {
      if (seconds_since(start) > kWakeDeadlineSeconds) {
        throw Error("hreduce probe: cross-process: the child did not answer wake-up " +
                    std::to_string(i) + " within 10 s");
      }
    }
    took.push_back(seconds_since(start));
  }
  return took;
}

}  // namespace

CrossProcess cross_process(const Topology& topology, int a, int b, double seconds) {
  void* memory =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw Error("hreduce probe: cross-process: mmap failed");
  auto* shared = new (memory) Shared;
  std::vector<std::byte> source(kReadSizes.back(), std::byte{1});  // touched before the fork
  const int wakes = seconds < 0.5 ? 50 : 200;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    munmap(memory, sizeof(Shared));
    throw Error("hreduce probe: cross-process: fork failed");
  }
  if (pid == 0) {
    pin(topology, b);
    child(*shared, parent, source.data(), wakes, seconds / 2);
  }
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, pid, 0, 0, 0);  // Yama: this child may read us
#endif
  pin(topology, a);
  shared->start.store(1, std::memory_order_release);
  int status = 0;
  while (shared->reads_done.load(std::memory_order_acquire) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (waitpid(pid, &status, WNOHANG) == pid) {
      throw Error("hreduce probe: cross-process: the child process ended before its reads");
    }
  }
  CrossProcess out;
  fit_reads(*shared, out);
  std::vector<double> took;
  try {
    took = wake_child(*shared, wakes);
  } catch (const Error&) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    throw;
  }
  waitpid(pid, &status, 0);
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, 0, 0, 0, 0);
#endif
  munmap(memory, sizeof(Shared));
  std::vector<double> sorted = took;
  std::sort(sorted.begin(), sorted.end());
  out.futex_wake_median_seconds = median(took);
  out.futex_wake_p90_seconds = sorted[sorted.size() * 9 / 10];
  return out;
}

}  // namespace hreduce::detail::probe
