// Implementation: combine never touches the heap, in particular not in the
// vector-form path that parks the left operand in a stack buffer. Global
// operator new is replaced in this binary only, to count allocations.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include <catch2/catch.hpp>

#include "hreduce/combine.hpp"
#include "hreduce/ops.hpp"

namespace {
std::atomic<long> g_allocations{0};
}

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
// Catch allocates with the nothrow forms; sanitizer runtimes do not route
// those through the replaced operator new, so they are replaced as well.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return ::operator new(size, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

struct Big {  // larger than the stack chunk: the chunk degrades to one element
  double x[600];
};

template <class T, class Op>
long allocations_during_combines(std::vector<T>& a, std::vector<T>& b, std::vector<T>& c,
                                 const Op& op) {
  const long before = g_allocations.load();
  hreduce::combine(a.data(), b.data(), a.data(), a.size(), op);
  hreduce::combine(a.data(), b.data(), b.data(), a.size(), op);
  hreduce::combine(a.data(), b.data(), c.data(), a.size(), op);
  hreduce::combine(a.data(), a.data(), a.data(), a.size(), op);
  return g_allocations.load() - before;
}

}  // namespace

TEST_CASE("combine does not allocate", "[ops][combine][implementation]") {
  const std::size_t n = GENERATE(as<std::size_t>{}, 1, 511, 512, 513, 100003);
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n);
  const auto vector_op = hreduce::make_op<double>([](const double* in, double* inout, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) inout[i] = in[i] - inout[i];
  });
  const auto elementwise_op =
      hreduce::make_op<double>([](const double& x, const double& y) { return x - y; });
  CHECK(allocations_during_combines(a, b, c, vector_op) == 0);
  CHECK(allocations_during_combines(a, b, c, elementwise_op) == 0);
  CHECK(allocations_during_combines(a, b, c, hreduce::op::sum) == 0);

  std::vector<Big> ba(3), bb(3), bc(3);
  const auto big_op = hreduce::make_op<Big>([](const Big* in, Big* inout, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) inout[i].x[0] += in[i].x[0];
  });
  CHECK(allocations_during_combines(ba, bb, bc, big_op) == 0);
}
