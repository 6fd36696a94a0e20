// The floor under the node level's long calls on two processes: what each
// way of moving a vector from one process to the other costs on this
// machine, with nothing of the library around it. Two calls, per size:
//
//  - a reduce to process 0 (x_0 + x_1 into process 0's output),
//  - an exscan on two processes, a plain copy (x_0 into process 1's output),
//  - an allreduce (x_0 + x_1 into both outputs);
//
// the first two moved three ways:
//
//  - one reader: the receiver reads the other's input with one
//    process_vm_readv (and folds): what Open MPI's receiver does, without
//    its messages;
//  - split: the node level's single copy (src/node/node_single_copy.cpp).
//    The receiver reads (and folds) `cut` sixteenths; the other moves the
//    rest, for a reduce reading the receiver's input, folding and writing
//    the sum back, for a copy writing its input. Every cut is timed; the
//    best is printed;
//  - streamed: the other copies its input through a ring of 64 KiB chunks
//    in shared memory and runs ahead; the receiver folds (or copies) from
//    the ring. That is the node level's inline path and chunks, at their
//    cheapest;
//
// and the allreduce two: split (each process reads and folds its part of
// the other's input and writes the sums back into the other's output,
// every cut timed) and streamed (each sends the other's part of its input
// through a ring, folds its own part from the other's ring, and sends the
// sums back through a second ring; both run ahead).
//
// Every operation of one reader and split begins with both processes
// announcing and ends with both releasing (the other's buffers are read or
// written in place), as in the library. Every buffer starts on a page, or
// with --offset B bytes past one (malloc's long blocks start 16 bytes past
// a page with glibc, and the drop-in benchmark's buffers come from malloc
// unless told otherwise); all at the same offset, so that no copy between
// two of them crawls where the destination lies 1-31 bytes past the source
// in a page (bench/string_copy_alignment.cpp; the library places its own
// buffers so). Inputs never change, so a line the receiver read stays in
// its cache, as in the drop-in benchmark (bench/mpi/dropin_latency.c).
// With --fresh, every operation begins with each process rewriting its
// input (the same values, copied from a copy of its own: as an application
// that computes new data before every call), so that no way finds the
// other's input still in its cache; the rewrite is in every way's time.
// Each figure: the median over 9 blocks of the mean µs per operation.
// Every way's result is checked.
//
//   bazel run //bench:cross_process_floor [-- [--offset B] [--fresh] BYTES...]
//   (default: offset 0, sizes 65536 262144)
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr int kBlocks = 9;
constexpr std::size_t kChunk = 64 * 1024;
constexpr std::uint64_t kRing = 16;  // chunks: 1 MiB, as the node level's slots

// Page-aligned vectors (the comment at the top says why).
template <class T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <class U>
  explicit PageAllocator(const PageAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{4096}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{4096}); }
  friend bool operator==(const PageAllocator&, const PageAllocator&) { return true; }
};
using Floats = std::vector<float, PageAllocator<float>>;

// A vector of floats that starts `offset` bytes (a multiple of 4) past a page.
struct PlacedFloats {
  Floats storage;
  std::size_t offset = 0;  // in floats

  void assign(std::size_t n, float value) { storage.assign(offset + n, value); }
  float* data() { return storage.data() + offset; }
  float& operator[](std::size_t i) { return data()[i]; }
};

// Progress words, each on its own line, in memory both processes map.
struct alignas(128) Word {
  std::atomic<std::uint64_t> value{0};
};
struct Shared {
  Word announced[2], released[2], staged, consumed;
  Word ready[2];  // setup and block barriers
  std::uint64_t input_address[2], output_address[2];
  alignas(64) std::byte ring[kRing * kChunk];
  // The streamed allreduce: process p's inputs for the other (`parts`) and
  // its sums for the other (`sums`), each a ring with its two words.
  Word parts_staged[2], parts_consumed[2], sums_staged[2], sums_consumed[2];
  alignas(64) std::byte parts[2][kRing * kChunk];
  alignas(64) std::byte sums[2][kRing * kChunk];
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

void wait_for(const Word& word, std::uint64_t target) {
  while (word.value.load(std::memory_order_acquire) < target) {
    __builtin_ia32_pause();
  }
}

void fold(float* out, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

void readv_from(pid_t pid, void* local, std::uint64_t remote, std::size_t bytes) {
  iovec mine{local, bytes}, theirs{reinterpret_cast<void*>(remote), bytes};
  if (bytes > 0 && process_vm_readv(pid, &mine, 1, &theirs, 1, 0) != static_cast<ssize_t>(bytes)) {
    fail("process_vm_readv");
  }
}

void writev_to(pid_t pid, std::uint64_t remote, const void* local, std::size_t bytes) {
  iovec mine{const_cast<void*>(local), bytes}, theirs{reinterpret_cast<void*>(remote), bytes};
  if (bytes > 0 && process_vm_writev(pid, &mine, 1, &theirs, 1, 0) != static_cast<ssize_t>(bytes)) {
    fail("process_vm_writev");
  }
}

enum class Call { reduce, copy, allreduce };
enum class Way { split, streamed };

struct Process {
  int me;
  pid_t peer;
  Shared* shared;
  // scratch: what process_vm_readv brings; sum: the other's fold, to write
  // back; source: what --fresh rewrites the input from.
  PlacedFloats input, output, scratch, sum, source;
  bool fresh = false;
  std::uint64_t ops = 0, steps = 0, allreduce_steps = 0, barriers = 0;

  void barrier() {
    ++barriers;
    shared->ready[me].value.store(barriers, std::memory_order_release);
    wait_for(shared->ready[1 - me], barriers);
  }

  // Process 0 receives a reduce; process 1 receives a copy.
  int receiver(Call call) const { return call == Call::reduce ? 0 : 1; }

  void split(Call call, std::size_t n, std::size_t cut) {
    const std::uint64_t op = ++ops;
    shared->announced[me].value.store(op, std::memory_order_release);
    wait_for(shared->announced[1 - me], op);
    if (call == Call::allreduce) {
      split_allreduce(n, cut);
    } else {
      split_one_receiver(call, n, cut);
    }
    shared->released[me].value.store(op, std::memory_order_release);
    wait_for(shared->released[1 - me], op);
  }

  // Process 0 folds [0, cut), process 1 [cut, n), each into its own output
  // and, written back, the other's.
  void split_allreduce(std::size_t n, std::size_t cut) {
    const std::size_t lo = me == 0 ? 0 : cut, hi = me == 0 ? cut : n;
    if (hi == lo) return;
    const std::size_t bytes = (hi - lo) * sizeof(float);
    readv_from(peer, scratch.data(), shared->input_address[1 - me] + lo * sizeof(float), bytes);
    fold(output.data() + lo, input.data() + lo, scratch.data(), hi - lo);
    writev_to(peer, shared->output_address[1 - me] + lo * sizeof(float), output.data() + lo, bytes);
  }

  void split_one_receiver(Call call, std::size_t n, std::size_t cut) {
    const std::size_t es = sizeof(float);
    const bool receives = me == receiver(call);
    // The receiver takes [0, cut), the other [cut, n).
    const std::size_t lo = receives ? 0 : cut, hi = receives ? cut : n;
    const std::uint64_t their_input = shared->input_address[1 - me] + lo * es;
    const std::uint64_t their_output = shared->output_address[1 - me] + lo * es;
    if (hi > lo) {
      const std::size_t bytes = (hi - lo) * es;
      if (call == Call::copy) {
        if (receives) {
          readv_from(peer, output.data() + lo, their_input, bytes);
        } else {
          writev_to(peer, their_output, input.data() + lo, bytes);
        }
      } else {
        readv_from(peer, scratch.data(), their_input, bytes);
        float* into = receives ? output.data() + lo : sum.data();
        fold(into, input.data() + lo, scratch.data(), hi - lo);
        if (!receives) writev_to(peer, their_output, sum.data(), bytes);
      }
    }
  }

  // Process 0's part is the first half, process 1's the second. Chunk k of
  // each goes: its input to the other (parts), folded there with the
  // other's, the sum back (sums).
  void streamed_allreduce(std::size_t n) {
    const std::size_t half = n / 2, per_chunk = kChunk / sizeof(float);
    const std::size_t mine = me == 0 ? 0 : half, theirs = me == 0 ? half : 0;
    const std::size_t my_n = me == 0 ? half : n - half, their_n = n - my_n;
    const int other = 1 - me;
    for (std::size_t a = 0; a < std::max(my_n, their_n); a += per_chunk) {
      const std::uint64_t step = ++allreduce_steps;  // the rings' words count these
      const std::size_t slot = (step % kRing) * kChunk;
      const std::size_t send = a < their_n ? std::min(per_chunk, their_n - a) : 0;
      const std::size_t own = a < my_n ? std::min(per_chunk, my_n - a) : 0;
      if (step > kRing) wait_for(shared->parts_consumed[me], step - kRing);
      std::memcpy(shared->parts[me] + slot, input.data() + theirs + a, send * sizeof(float));
      shared->parts_staged[me].value.store(step, std::memory_order_release);
      wait_for(shared->parts_staged[other], step);
      float* out = output.data() + mine + a;
      fold(out, input.data() + mine + a,
           reinterpret_cast<const float*>(shared->parts[other] + slot), own);
      shared->parts_consumed[other].value.store(step, std::memory_order_release);
      if (step > kRing) wait_for(shared->sums_consumed[me], step - kRing);
      std::memcpy(shared->sums[me] + slot, out, own * sizeof(float));
      shared->sums_staged[me].value.store(step, std::memory_order_release);
      wait_for(shared->sums_staged[other], step);
      std::memcpy(output.data() + theirs + a, shared->sums[other] + slot, send * sizeof(float));
      shared->sums_consumed[other].value.store(step, std::memory_order_release);
    }
  }

  void streamed(Call call, std::size_t n) {
    if (call == Call::allreduce) return streamed_allreduce(n);
    const bool receives = me == receiver(call);
    const std::size_t per_chunk = kChunk / sizeof(float);
    for (std::size_t a = 0; a < n; a += per_chunk) {
      const std::size_t m = std::min(per_chunk, n - a);
      const std::uint64_t step = ++steps;
      auto* chunk = reinterpret_cast<float*>(shared->ring + (step % kRing) * kChunk);
      if (!receives) {
        if (step > kRing) wait_for(shared->consumed, step - kRing);
        std::memcpy(chunk, input.data() + a, m * sizeof(float));
        shared->staged.value.store(step, std::memory_order_release);
      } else {
        wait_for(shared->staged, step);
        if (call == Call::reduce) {
          fold(output.data() + a, input.data() + a, chunk, m);
        } else {
          std::memcpy(output.data() + a, chunk, m * sizeof(float));
        }
        shared->consumed.value.store(step, std::memory_order_release);
      }
    }
  }

  // Mean µs per operation, median over the blocks (valid on process 0).
  double time(Way way, Call call, std::size_t n, std::size_t cut) {
    const long per_block = static_cast<long>(std::max<std::size_t>(200, (64u << 20) / (n * 4)));
    auto run = [&] {
      if (fresh) std::memcpy(input.data(), source.data(), n * sizeof(float));
      way == Way::split ? split(call, n, cut) : streamed(call, n);
    };
    for (int i = 0; i < 20; ++i) run();
    std::vector<double> blocks;
    for (int b = 0; b < kBlocks; ++b) {
      barrier();
      const auto start = std::chrono::steady_clock::now();
      for (long i = 0; i < per_block; ++i) run();
      barrier();  // the streaming process has finished too
      const std::chrono::duration<double, std::micro> took =
          std::chrono::steady_clock::now() - start;
      blocks.push_back(took.count() / static_cast<double>(per_block));
    }
    check(call, n);
    std::sort(blocks.begin(), blocks.end());
    return blocks[kBlocks / 2];
  }

  void check(Call call, std::size_t n) {
    if (call != Call::allreduce && me != receiver(call)) return;
    for (std::size_t i = 0; i < n; ++i) {
      const float x0 = static_cast<float>(i % 5), x1 = 1 + x0;
      const float want = call == Call::copy ? x0 : x0 + x1;
      if (output[i] != want) {
        std::fprintf(stderr, "cross_process_floor: wrong result at element %zu: %g, not %g\n", i,
                     static_cast<double>(output[i]), static_cast<double>(want));
        std::exit(1);
      }
    }
    std::fill(output.data(), output.data() + n, -1.0f);
  }
};

void report(Process& p, Call call, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(float);
  auto cut_of = [&](int sixteenths) { return n * sixteenths / 16; };
  const double one_reader = call == Call::allreduce ? 0 : p.time(Way::split, call, n, cut_of(16));
  double best = 1e300;
  int best_cut = 16;
  for (int sixteenths = 0; sixteenths < 16; ++sixteenths) {
    const double t = p.time(Way::split, call, n, cut_of(sixteenths));
    if (t < best) best = t, best_cut = sixteenths;
  }
  const double streamed = p.time(Way::streamed, call, n, 0);
  if (p.me != 0) return;
  const char* name = call == Call::reduce ? "reduce to one process"
                     : call == Call::copy ? "exscan (a copy)"
                                          : "allreduce";
  std::printf("%s, %zu B per process:\n", name, bytes);
  if (call != Call::allreduce) {
    std::printf("  one reader (process_vm_readv%s)   %8.2f us\n",
                call == Call::reduce ? " + fold" : "", one_reader);
  }
  std::printf("  split, best cut (%s %2d/16)      %8.2f us\n",
              call == Call::allreduce ? "process 0" : "receiver ", best_cut, best);
  std::printf("  streamed through shared memory        %8.2f us\n", streamed);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  std::size_t offset = 0;
  bool fresh = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fresh") == 0) {
      fresh = true;
      continue;
    }
    if (std::strcmp(argv[i], "--offset") == 0 && i + 1 < argc) {
      offset = std::strtoull(argv[++i], nullptr, 10);
      if (offset >= 4096 || offset % sizeof(float) != 0) {
        std::fprintf(stderr,
                     "cross_process_floor: --offset takes a multiple of 4 below 4096, not %s\n",
                     argv[i]);
        return 2;
      }
      continue;
    }
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  }
  if (sizes.empty()) sizes = {65536, 262144};
  for (std::size_t bytes : sizes) {
    if (bytes < 64 || bytes % 64 != 0) {
      std::fprintf(stderr, "cross_process_floor: sizes are multiples of 64 bytes, not %zu\n",
                   bytes);
      return 2;
    }
  }
  void* memory =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) fail("mmap");
  auto* shared = new (memory) Shared;
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // the child reads the parent
#endif
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) fail("fork");
  const int me = child == 0 ? 1 : 0;
  pin(me);
  const std::size_t most = *std::max_element(sizes.begin(), sizes.end()) / sizeof(float);
  Process p{me, me == 0 ? child : parent, shared, {}, {}, {}, {}, {}, fresh};
  for (PlacedFloats* v : {&p.input, &p.output, &p.scratch, &p.sum, &p.source}) {
    v->offset = offset / sizeof(float);
  }
  // Allocated after the fork, so that no page is shared copy-on-write.
  p.input.assign(most, 0.0f);
  p.output.assign(most, -1.0f);
  p.scratch.assign(most, 0.0f);
  p.sum.assign(most, 0.0f);
  p.source.assign(fresh ? most : 0, 0.0f);
  for (std::size_t i = 0; i < most; ++i) p.input[i] = static_cast<float>(me + i % 5);
  if (fresh) std::memcpy(p.source.data(), p.input.data(), most * sizeof(float));
  shared->input_address[me] = reinterpret_cast<std::uint64_t>(p.input.data());
  shared->output_address[me] = reinterpret_cast<std::uint64_t>(p.output.data());
  p.barrier();
  if (me == 0) {
    std::printf("two processes on cores 0 and 1, float sum, buffers %zu bytes past a page%s\n",
                offset, fresh ? ", inputs rewritten before every operation" : "");
  }
  for (std::size_t bytes : sizes) {
    report(p, Call::reduce, bytes);
    report(p, Call::copy, bytes);
    report(p, Call::allreduce, bytes);
  }
  if (me == 1) return 0;
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
