// Differential testing of the team collectives: every member's output is
// compared with a plain sequential fold over the same inputs.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "hreduce/team.hpp"

namespace hreduce::test {

using hreduce::Collective;

inline const char* name_of(Collective c) { return to_string(c).data(); }

inline const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all = {
      Collective::reduce,         Collective::allreduce,
      Collective::reduce_scatter, Collective::reduce_scatter_block,
      Collective::scan,           Collective::exscan};
  return all;
}

// Sanitizer runs set HREDUCE_TEST_QUICK=1: fewer sizes and team sizes.
inline bool quick() {
  const char* v = std::getenv("HREDUCE_TEST_QUICK");
  return v != nullptr && *v != '\0' && *v != '0';
}

// Uneven reduce_scatter counts summing to about n, with some zero blocks.
inline std::vector<std::size_t> uneven_counts(int p, std::size_t n) {
  std::vector<std::size_t> counts(p);
  for (int r = 0; r < p; ++r) {
    counts[r] = r % 3 == 1
                    ? 0
                    : n / static_cast<std::size_t>(p) + static_cast<std::size_t>(r % 2) * (n % 5);
  }
  return counts;
}

// One collective call on every member, checked against the oracle.
template <class Fam>
class CollectiveCheck {
 public:
  using T = typename Fam::value_type;

  // Member r's output after the call.
  const std::vector<T>& output(int r) const { return out_[r]; }
  std::size_t block() const { return block_; }
  const std::vector<std::size_t>& counts() const { return counts_; }

  CollectiveCheck(const Fam& fam, Collective collective, int p, std::size_t n, bool in_place,
                  int root)
      : fam_(fam), c_(collective), p_(p), n_(n), in_place_(in_place), root_(root) {
    counts_ = uneven_counts(p, n);
    block_ = n / static_cast<std::size_t>(p) + (n > 0 ? 1 : 0);
    const std::size_t len = input_length();
    x_.assign(p, std::vector<T>(len));
    for (int r = 0; r < p; ++r) {
      for (std::size_t i = 0; i < len; ++i) x_[r][i] = fam.input(r, i);
    }
    // prefix_[r] = x_0 ∘ … ∘ x_r, a plain left-to-right loop.
    prefix_ = x_;
    for (int r = 1; r < p; ++r) {
      for (std::size_t i = 0; i < len; ++i) prefix_[r][i] = fam.op(prefix_[r - 1][i], x_[r][i]);
    }
    for (int r = 0; r < p; ++r) {
      if (in_place) {
        out_.push_back(x_[r]);
      } else {
        // A sentinel pattern, so untouched outputs can be told apart.
        std::vector<T> sentinel(std::max(len, output_length(r)));
        for (std::size_t i = 0; i < sentinel.size(); ++i) sentinel[i] = fam.input(p + 7, i);
        out_.push_back(std::move(sentinel));
      }
    }
  }

  // What member `m` runs.
  void run(Member& m, const CollectiveOptions& options) {
    const int r = m.rank();
    const T* in = in_place_ ? out_[r].data() : x_[r].data();
    T* out = out_[r].data();
    switch (c_) {
      case Collective::reduce: m.reduce(in, out, n_, fam_.op, root_, options); break;
      case Collective::allreduce: m.allreduce(in, out, n_, fam_.op, options); break;
      case Collective::reduce_scatter:
        m.reduce_scatter(in, out, std::span<const std::size_t>(counts_), fam_.op, options);
        break;
      case Collective::reduce_scatter_block:
        m.reduce_scatter_block(in, out, block_, fam_.op, options);
        break;
      case Collective::scan: m.scan(in, out, n_, fam_.op, options); break;
      case Collective::exscan: m.exscan(in, out, n_, fam_.op, options); break;
    }
  }

  // What member r's output holds after the call: elements [offset, offset +
  // length) of the fold of the inputs of members 0 .. last; last = -1 when
  // it receives nothing and its output must stay untouched.
  struct Share {
    std::size_t offset = 0, length = 0;
    int last = -1;
  };
  Share share_of(int r) const {
    switch (c_) {
      case Collective::reduce: return r == root_ ? Share{0, n_, p_ - 1} : Share{};
      case Collective::allreduce: return {0, n_, p_ - 1};
      case Collective::scan: return {0, n_, r};
      case Collective::exscan: return r == 0 ? Share{} : Share{0, n_, r - 1};
      case Collective::reduce_scatter: {
        std::size_t offset = 0;
        for (int q = 0; q < r; ++q) offset += counts_[q];
        return {offset, counts_[r], p_ - 1};
      }
      case Collective::reduce_scatter_block:
        return {block_ * static_cast<std::size_t>(r), block_, p_ - 1};
    }
    return {};
  }

  // Empty when every member got what docs/spec.md says; else the first problem.
  // A process of a multi-process team checks its own members [first, last).
  std::string verify(int first = 0, int last = -1) const {
    for (int r = first; r < (last < 0 ? p_ : last); ++r) {
      const Share share = share_of(r);
      const std::string problem = share.last < 0
                                      ? untouched(r)
                                      : compare(r, prefix_[share.last], share.offset, share.length);
      if (!problem.empty()) return problem;
    }
    return {};
  }

 private:
  std::size_t input_length() const {
    switch (c_) {
      case Collective::reduce_scatter: {
        std::size_t total = 0;
        for (std::size_t c : counts_) total += c;
        return total;
      }
      case Collective::reduce_scatter_block: return block_ * static_cast<std::size_t>(p_);
      default: return n_;
    }
  }
  std::size_t output_length(int r) const {
    switch (c_) {
      case Collective::reduce_scatter: return counts_[r];
      case Collective::reduce_scatter_block: return block_;
      default: return n_;
    }
  }

  // out_[r][0, len) must equal expected[offset, offset + len).
  std::string compare(int r, const std::vector<T>& expected, std::size_t offset,
                      std::size_t len) const {
    for (std::size_t i = 0; i < len; ++i) {
      if (!(out_[r][i] == expected[offset + i])) {
        std::ostringstream why;
        why << "member " << r << " element " << i << " differs from the sequential oracle";
        return why.str();
      }
    }
    return {};
  }

  std::string untouched(int r) const {
    for (std::size_t i = 0; i < out_[r].size(); ++i) {
      const T original = in_place_ ? x_[r][i] : fam_.input(p_ + 7, i);
      if (!(out_[r][i] == original)) {
        return "member " + std::to_string(r) + " output was modified at element " +
               std::to_string(i) + " but must stay untouched";
      }
    }
    return {};
  }

  const Fam& fam_;
  Collective c_;
  int p_;
  std::size_t n_;
  bool in_place_;
  int root_;
  std::vector<std::size_t> counts_;
  std::size_t block_ = 0;
  std::vector<std::vector<T>> x_, prefix_, out_;
};

// Runs one check on a team with persistent workers.
template <class Fam>
std::string check_on_team(Team& team, const Fam& fam, Collective c, std::size_t n, bool in_place,
                          int root, const CollectiveOptions& options = {}) {
  CollectiveCheck<Fam> check(fam, c, team.size(), n, in_place, root);
  team.run([&](Member& m) { check.run(m, options); });
  return check.verify();
}

}  // namespace hreduce::test
