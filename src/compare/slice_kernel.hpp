// The hand-written slice-parallel collective that the OpenMP and oneTBB
// baselines run: a thread owns an element range [lo, hi) of every member's
// vector and folds it chunk by chunk straight into the first output that
// wants it, then copies that chunk, still in L1, to any other: every input
// byte is read once and every output byte written once — the fastest
// plain-loop formulation we know, so that the baselines are strong. (A
// separate accumulator costs one more pass through the cache per chunk, as
// it did hreduce's own sliced path: see src/engine/sliced.cpp.)
#pragma once

#include <algorithm>
#include <cstddef>

#include "src/common/copy.hpp"
#include "src/compare/problem.hpp"

namespace hreduce::detail::compare {

// Slice boundaries on whole cache lines, so two threads never write one line.
inline std::size_t slice_edge(int thread, int threads, std::size_t n, std::size_t elem_size) {
  const std::size_t granule = 64 % elem_size == 0 ? 64 / elem_size : 1;
  const std::size_t units = (n + granule - 1) / granule;
  return std::min(n, units * thread / threads * granule);
}

template <class T>
class SliceKernel {
 public:
  static constexpr std::size_t kChunk = 4096 / sizeof(T) > 0 ? 4096 / sizeof(T) : 1;

  explicit SliceKernel(Problem<T>& problem) : p_(problem) {}

  // Input element range [lo, hi) of every member, in rank order.
  void run(std::size_t lo, std::size_t hi) const {
    for (std::size_t at = lo; at < hi;) {
      std::size_t len = std::min(kChunk, hi - at);
      if (p_.collective == Collective::reduce_scatter_block) {
        len = std::min(len, p_.block() - at % p_.block());
      }
      chunk(at, len);
      at += len;
    }
  }

 private:
  // to = a ∘ b over len elements.
  static void combine(T* to, const T* a, const T* b, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) to[i] = Element<T>::combine(a[i], b[i]);
  }
  // to = x_0 ∘ … ∘ x_last, folded in place in the output itself.
  void fold_into(T* to, int last, std::size_t at, std::size_t len) const {
    const T* x0 = p_.in[0].data() + at;
    if (last == 0) {
      copy_bytes(to, x0, len * sizeof(T));
      return;
    }
    combine(to, x0, p_.in[1].data() + at, len);
    for (int m = 2; m <= last; ++m) combine(to, to, p_.in[m].data() + at, len);
  }
  static void put(T* to, const T* from, std::size_t len) { copy_bytes(to, from, len * sizeof(T)); }

  void chunk(std::size_t at, std::size_t len) const {
    const int p = p_.members;
    auto in = [&](int m) { return p_.in[m].data() + at; };
    auto out = [&](int m) { return p_.out[m].data() + at; };
    switch (p_.collective) {
      case Collective::reduce: fold_into(out(Problem<T>::root), p - 1, at, len); break;
      case Collective::allreduce:
        fold_into(out(0), p - 1, at, len);
        for (int m = 1; m < p; ++m) put(out(m), out(0), len);
        break;
      case Collective::reduce_scatter_block: {
        const std::size_t owner = at / p_.block();
        fold_into(p_.out[owner].data() + at % p_.block(), p - 1, at, len);
        break;
      }
      case Collective::scan:
        // Each prefix from the previous one, just written and still cached.
        put(out(0), in(0), len);
        for (int m = 1; m < p; ++m) combine(out(m), out(m - 1), in(m), len);
        break;
      case Collective::exscan:
        // The first prefix is x_0 itself: copied where it lies.
        if (p > 1) put(out(1), in(0), len);
        for (int m = 2; m < p; ++m) combine(out(m), out(m - 1), in(m - 1), len);
        break;
      case Collective::reduce_scatter: break;  // not compared (kCollectives)
    }
  }

  Problem<T>& p_;
};

}  // namespace hreduce::detail::compare
