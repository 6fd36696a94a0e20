// The hand-written slice-parallel collective that the OpenMP and oneTBB
// baselines run: a thread owns an element range [lo, hi) of every member's
// vector and folds it chunk by chunk through an accumulator that stays in L1,
// so every input byte is read once and every output byte written once — the
// fastest plain-loop formulation we know, so that the baselines are strong.
#pragma once

#include <algorithm>
#include <cstddef>

#include "src/compare/problem.hpp"
#include "src/engine/copy.hpp"

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
    alignas(64) T acc[kChunk];
    for (std::size_t at = lo; at < hi;) {
      std::size_t len = std::min(kChunk, hi - at);
      if (p_.collective == Collective::reduce_scatter_block) {
        len = std::min(len, p_.block() - at % p_.block());
      }
      chunk(acc, at, len);
      at += len;
    }
  }

 private:
  static void fold(T* acc, const T* x, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) acc[i] = Element<T>::combine(acc[i], x[i]);
  }
  // acc = x_0 ∘ … ∘ x_last, the first combine straight from the inputs.
  void fold_through(T* acc, int last, std::size_t at, std::size_t len) const {
    const T* x0 = p_.in[0].data() + at;
    if (last == 0) {
      copy_bytes(acc, x0, len * sizeof(T));
      return;
    }
    const T* x1 = p_.in[1].data() + at;
    for (std::size_t i = 0; i < len; ++i) acc[i] = Element<T>::combine(x0[i], x1[i]);
    for (int m = 2; m <= last; ++m) fold(acc, p_.in[m].data() + at, len);
  }
  static void put(T* to, const T* from, std::size_t len) { copy_bytes(to, from, len * sizeof(T)); }

  void chunk(T* acc, std::size_t at, std::size_t len) const {
    const int p = p_.members;
    auto in = [&](int m) { return p_.in[m].data() + at; };
    auto out = [&](int m) { return p_.out[m].data() + at; };
    switch (p_.collective) {
      case Collective::reduce:
        fold_through(acc, p - 1, at, len);
        put(out(Problem<T>::root), acc, len);
        break;
      case Collective::allreduce:
        fold_through(acc, p - 1, at, len);
        for (int m = 0; m < p; ++m) put(out(m), acc, len);
        break;
      case Collective::reduce_scatter_block: {
        fold_through(acc, p - 1, at, len);
        const std::size_t owner = at / p_.block();
        put(p_.out[owner].data() + at % p_.block(), acc, len);
        break;
      }
      case Collective::scan:
        put(out(0), in(0), len);
        if (p > 1) fold_through(acc, 1, at, len);
        for (int m = 1; m < p; ++m) {
          if (m > 1) fold(acc, in(m), len);
          put(out(m), acc, len);
        }
        break;
      case Collective::exscan:
        // The first prefix is x_0 itself: copied where it lies.
        if (p > 1) put(out(1), in(0), len);
        if (p > 2) fold_through(acc, 1, at, len);
        for (int m = 2; m < p; ++m) {
          if (m > 2) fold(acc, in(m - 1), len);
          put(out(m), acc, len);
        }
        break;
    }
  }

  Problem<T>& p_;
};

}  // namespace hreduce::detail::compare
