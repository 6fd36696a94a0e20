// Throughput of the combine kernel through reduce_local (inout = in ∘ inout).
//
// Each iteration reads `in` and `inout` and writes `inout`: 3·n·sizeof(T)
// bytes, which is what bytes_per_second counts. Sizes run from 4 KiB per
// buffer (L1-resident) through 256 KiB (L2) to 8 MiB (L3 or memory).
//
// GB/s alone does not prove vectorization: a scalar loop retiring one element
// per cycle already moves 24 bytes of double per cycle. elem_per_cycle (items
// per second over the nominal clock the library reads from the OS) does: a
// scalar loop cannot exceed about 1, an AVX2 loop on 4-byte types reaches
// several while the data sits in L1/L2. (It is a rate counter, so the console
// prints it with a "/s" that means nothing here.)
//
// Baseline in the same binary: a hand-written `inout[i] += in[i]` loop with
// __restrict, which GCC vectorizes without any runtime alias check. The ratio
// reduce_local/baseline is the cost of the generic kernel.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include <benchmark/benchmark.h>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"

namespace {

// `in` and `inout` in one page-aligned block, `inout` starting half a page
// past a page boundary. Where malloc puts two vectors differs from one
// benchmark to the next, and when their addresses agree in the low 12 bits
// within a few elements, loads stall behind unrelated stores (4K aliasing)
// and the kernel and the baseline stop being comparable.
template <class T>
class Buffers {
 public:
  explicit Buffers(std::size_t n) {
    constexpr std::size_t kPage = 4096;
    const std::size_t bytes = n * sizeof(T);
    const std::size_t inout_offset = (bytes + kPage - 1) / kPage * kPage + kPage / 2;
    const std::size_t total = (inout_offset + bytes + kPage - 1) / kPage * kPage;
    block_.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, total)));
    if (!block_) throw std::bad_alloc();
    in = reinterpret_cast<T*>(block_.get());
    inout = reinterpret_cast<T*>(block_.get() + inout_offset);
    // Small values: repeated summing never reaches infinity or denormals,
    // which would measure the FPU's slow paths instead of the kernel.
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = static_cast<T>(i % 17);
      inout[i] = static_cast<T>(i % 5);
    }
  }

  T* in = nullptr;
  T* inout = nullptr;

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte[], Free> block_;
};

template <class T>
void set_counters(benchmark::State& state, std::size_t n) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 3 *
                          static_cast<std::int64_t>(n * sizeof(T)));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n));
  const double hz = benchmark::CPUInfo::Get().cycles_per_second;
  if (hz > 0) {
    state.counters["elem_per_cycle"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(n) / hz,
                           benchmark::Counter::kIsRate);
  }
}

template <class T, class Op>
void BM_ReduceLocal(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0)) / sizeof(T);
  Buffers<T> buffers(n);
  for (auto _ : state) {
    hreduce::reduce_local(buffers.in, buffers.inout, n, Op{});
    benchmark::DoNotOptimize(buffers.inout);
    benchmark::ClobberMemory();
  }
  set_counters<T>(state, n);
}

template <class T>
[[gnu::noinline]] void restrict_sum(const T* __restrict in, T* __restrict inout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) inout[i] += in[i];
}

template <class T>
void BM_Baseline_RestrictSum(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0)) / sizeof(T);
  Buffers<T> buffers(n);
  for (auto _ : state) {
    restrict_sum(buffers.in, buffers.inout, n);
    benchmark::DoNotOptimize(buffers.inout);
    benchmark::ClobberMemory();
  }
  set_counters<T>(state, n);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes"});
  for (std::int64_t bytes = 4 << 10; bytes <= 256 << 10; bytes *= 2) b->Arg(bytes);
  b->Arg(8 << 20);
}

template <class T, class Op>
void register_reduce_local(const std::string& type_name) {
  const std::string name = "BM_ReduceLocal/" + std::string(Op::name) + "<" + type_name + ">";
  benchmark::RegisterBenchmark(name.c_str(), BM_ReduceLocal<T, Op>)->Apply(sizes);
}

template <class T>
void register_baseline(const std::string& type_name) {
  const std::string name = "BM_Baseline_RestrictSum<" + type_name + ">";
  benchmark::RegisterBenchmark(name.c_str(), BM_Baseline_RestrictSum<T>)->Apply(sizes);
}

std::string vector_isa() {
#if defined(__AVX512F__)
  return "avx512f";
#elif defined(__AVX2__)
  return "avx2";
#elif defined(__AVX__)
  return "avx";
#elif defined(__SSE2__)
  return "sse2";
#else
  return "none";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  benchmark::AddCustomContext("compiler", "GCC " __VERSION__);
  benchmark::AddCustomContext("vector_isa", vector_isa());
#ifdef NDEBUG
  benchmark::AddCustomContext("asserts", "off");
#else
  benchmark::AddCustomContext("asserts", "on");
#endif
  benchmark::AddCustomContext("bytes_counted",
                              "3 * n * sizeof(T) per call (in, inout read; inout written)");

  namespace op = hreduce::op;
  register_reduce_local<double, op::sum_t>("double");
  register_reduce_local<double, op::max_t>("double");
  register_reduce_local<float, op::sum_t>("float");
  register_reduce_local<float, op::max_t>("float");
  register_reduce_local<std::int32_t, op::sum_t>("int32");
  register_reduce_local<std::int32_t, op::max_t>("int32");
  register_baseline<double>("double");
  register_baseline<float>("float");
  register_baseline<std::int32_t>("int32");

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
