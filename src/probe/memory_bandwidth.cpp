// Memory bandwidth between NUMA nodes: threads on node `from` stream
// buffers placed on node `to`, for one thread and for one thread per core
// of `from`. Three kernels: read (a sum of the 64-bit words), copy (memcpy) and fold
// (reduce_local's double sum, the library's own kernel). Bytes counted:
// read n·8, copy 2·n·8, fold 3·n·8 (two reads, one write), as
// bench/reduce_local_bench counts them.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"
#include "src/probe/measurements.hpp"
#include "src/topology/numa_memory.hpp"

namespace hreduce::detail::probe {
namespace {

using Clock = std::chrono::steady_clock;
enum class Kernel { read, copy, fold };
constexpr int kMinPasses = 3;
// Reads the doubles' bits without breaking type-based alias rules.
typedef std::uint64_t __attribute__((__may_alias__)) Word;

struct ThreadBuffers {
  NumaBuffer source, target;
  std::size_t n() const { return source.size() / sizeof(double); }
};

// The first PU of each core (or each PU, on a machine without cores) of a
// NUMA node, in logical order.
std::vector<int> node_pus(const Topology& topology, int numa) {
  std::vector<int> pus;
  int last_core = -2;
  for (const Pu& pu : topology.pus()) {
    if (pu.in(Level::numa) != numa && topology.count(Level::numa) > 0) continue;
    if (pu.in(Level::core) >= 0 && pu.in(Level::core) == last_core) continue;
    last_core = pu.in(Level::core);
    pus.push_back(pu.logical_index);
  }
  return pus;
}

// Built by a thread pinned to `numa`, so that first-touch memory lands there
// where hwloc cannot bind it.
std::vector<ThreadBuffers> buffers_on(const Topology& topology, int numa, int threads,
                                      std::uint64_t bytes) {
  std::vector<ThreadBuffers> buffers;
  std::thread builder([&] {
    const std::vector<int> pus = node_pus(topology, numa);
    if (!pus.empty()) bind_current_thread(topology, pus.front());
    for (int t = 0; t < threads; ++t) {
      ThreadBuffers b{NumaBuffer(topology, bytes, numa), NumaBuffer(topology, bytes, numa)};
      auto* source = static_cast<double*>(b.source.data());
      // Small values: folding them again and again never overflows.
      for (std::size_t i = 0; i < b.n(); ++i) source[i] = static_cast<double>(i % 17);
      std::memset(b.target.data(), 0, b.target.size());
      buffers.push_back(std::move(b));
    }
  });
  builder.join();
  return buffers;
}

double run_kernel(Kernel kernel, ThreadBuffers& b) {
  const auto* source = static_cast<const double*>(b.source.data());
  auto* target = static_cast<double*>(b.target.data());
  const std::size_t n = b.n();
  if (kernel == Kernel::copy) {
    std::memcpy(target, source, n * sizeof(double));
    return target[n / 2];
  }
  if (kernel == Kernel::fold) {
    reduce_local(source, target, n, op::sum);
    return target[n / 2];
  }
  // Summed as 64-bit integers, which the compiler vectorizes (a double
  // sum's add latency, not memory, would set the pace).
  const auto* words = reinterpret_cast<const Word*>(source);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += words[i];
  return static_cast<double>(sum);
}

std::uint64_t bytes_moved(Kernel kernel, std::uint64_t bytes) {
  return kernel == Kernel::read ? bytes : kernel == Kernel::copy ? 2 * bytes : 3 * bytes;
}

// Passes in lockstep until `seconds` have gone (at least kMinPasses after a
// warm-up pass); each pass's rate is all threads' bytes over the slowest
// thread's time. The median pass rate.
double bandwidth(const Topology& topology, Kernel kernel, const std::vector<int>& pus,
                 std::vector<ThreadBuffers>& buffers, double seconds) {
  const std::size_t threads = pus.size();
  std::vector<double> took(threads, 0), rates;
  const double total = static_cast<double>(bytes_moved(kernel, buffers[0].source.size())) *
                       static_cast<double>(threads);
  bool stop = false;
  int passes = 0;
  const auto start = Clock::now();
  std::barrier sync(static_cast<std::ptrdiff_t>(threads), [&]() noexcept {
    if (passes++ > 0) rates.push_back(total / *std::max_element(took.begin(), took.end()));
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    stop = static_cast<int>(rates.size()) >= kMinPasses && elapsed >= seconds;
  });
  std::vector<double> sinks(threads, 0);
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      bind_current_thread(topology, pus[t]);
      while (true) {
        const auto begin = Clock::now();
        sinks[t] += run_kernel(kernel, buffers[t]);
        took[t] = std::chrono::duration<double>(Clock::now() - begin).count();
        sync.arrive_and_wait();
        if (stop) return;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return median(rates);
}

const char* kernel_name(Kernel kernel) {
  return kernel == Kernel::read ? "read" : kernel == Kernel::copy ? "copy" : "fold";
}

NumaMatrix& matrix(MemoryKernels& kernels, Kernel kernel) {
  return kernel == Kernel::read   ? kernels.read
         : kernel == Kernel::copy ? kernels.copy
                                  : kernels.fold;
}

// Repeated passes over one thread's buffers, in blocks long enough for the
// clock (small buffers take many passes a block): the median block rate.
double rate_of_passes(Kernel kernel, ThreadBuffers& b, double seconds) {
  constexpr int kBlocks = 5;
  const double bytes = static_cast<double>(bytes_moved(kernel, b.source.size()));
  double sink = run_kernel(kernel, b);
  const auto warm = Clock::now();
  long passes = 0;
  while (Clock::now() - warm < std::chrono::milliseconds(2) || passes < 2) {
    sink += run_kernel(kernel, b);
    ++passes;
  }
  const double per_pass =
      std::chrono::duration<double>(Clock::now() - warm).count() / static_cast<double>(passes);
  const long each = std::max(1L, static_cast<long>(seconds / kBlocks / per_pass));
  std::vector<double> rates;
  for (int block = 0; block < kBlocks; ++block) {
    const auto start = Clock::now();
    for (long i = 0; i < each; ++i) sink += run_kernel(kernel, b);
    rates.push_back(bytes * static_cast<double>(each) /
                    std::chrono::duration<double>(Clock::now() - start).count());
  }
  volatile double keep = sink;  // the kernels' results stay live
  (void)keep;
  return median(rates);
}

}  // namespace

// Working sets (source and target) from 4 KiB to 128 MiB by eights and
// fours: L1, L2, the last-level cache and memory on any machine we know.
std::vector<SizedRate> one_thread_by_size(const Topology& topology, double seconds) {
  constexpr std::uint64_t kWorkingSets[] = {4u << 10, 32u << 10, 256u << 10, 2u << 20,
                                            8u << 20, 32u << 20, 128u << 20};
  std::vector<SizedRate> out;
  std::thread worker([&] {
    const std::vector<int> pus = node_pus(topology, 0);
    if (!pus.empty()) bind_current_thread(topology, pus.front());
    for (std::uint64_t working_set : kWorkingSets) {
      std::vector<ThreadBuffers> b = buffers_on(topology, 0, 1, working_set / 2);
      out.push_back({working_set, rate_of_passes(Kernel::copy, b[0], seconds),
                     rate_of_passes(Kernel::fold, b[0], seconds)});
    }
  });
  worker.join();
  return out;
}

MemoryBandwidth memory_bandwidth(const Topology& topology, std::uint64_t bytes_per_thread,
                                 double seconds,
                                 const std::function<void(const std::string&)>& progress) {
  const int nodes = std::max(topology.count(Level::numa), 1);
  MemoryBandwidth out;
  out.bytes_per_thread = bytes_per_thread / sizeof(double) * sizeof(double);
  for (MemoryKernels* k : {&out.one_thread, &out.node_threads}) {
    for (Kernel kernel : {Kernel::read, Kernel::copy, Kernel::fold}) {
      matrix(*k, kernel).assign(nodes, std::vector<double>(nodes, 0.0));
    }
  }
  std::vector<std::vector<int>> pus_of(static_cast<std::size_t>(nodes));
  std::size_t most = 1;
  for (int from = 0; from < nodes; ++from) {
    pus_of[from] = node_pus(topology, from);
    out.threads_per_node.push_back(static_cast<int>(pus_of[from].size()));
    most = std::max(most, pus_of[from].size());
  }
  // One set of buffers per memory node, shared by every node's threads:
  // placing and touching them costs more than a cell's measurement.
  for (int to = 0; to < nodes; ++to) {
    std::vector<ThreadBuffers> buffers =
        buffers_on(topology, to, static_cast<int>(most), out.bytes_per_thread);
    for (int from = 0; from < nodes; ++from) {
      const std::vector<int>& pus = pus_of[from];
      if (pus.empty()) continue;  // a CPU-less node: memory only
      for (Kernel kernel : {Kernel::read, Kernel::copy, Kernel::fold}) {
        progress(std::string("memory ") + kernel_name(kernel) + " NUMA " + std::to_string(from) +
                 " -> " + std::to_string(to));
        matrix(out.one_thread, kernel)[from][to] =
            bandwidth(topology, kernel, {pus.front()}, buffers, seconds);
        matrix(out.node_threads, kernel)[from][to] =
            bandwidth(topology, kernel, pus, buffers, seconds);
      }
    }
  }
  return out;
}

}  // namespace hreduce::detail::probe
