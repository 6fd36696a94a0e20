// The limit: on the team's own threads, each member whose input the
// collective reads (every member, but an exscan's last) reads it once, and
// those members write an equal share each of the collective's outputs
// once — the least memory traffic any implementation of the collective
// needs, with no arithmetic dependence between members — then all meet at
// a barrier, once per call. Member r copies the first part of its input
// into its share of the outputs and streams the rest through a sum that
// the compiler cannot drop. Small vectors are mostly that barrier, so it is
// a reference to compare with, not a bound: hreduce's own synchronisation
// may cost less.
#include <algorithm>
#include <vector>

#include "src/common/copy.hpp"
#include "src/compare/runner.hpp"
#include "src/compare/timing.hpp"

namespace hreduce::detail::compare {
namespace {

struct Segment {
  char* to;
  std::size_t bytes;
};

template <class T>
class LimitRunner final : public Runner {
 public:
  LimitRunner(Team& team, Problem<T>& problem) : team_(team), p_(problem) {
    std::vector<Segment> outputs;
    std::size_t total = 0;
    for (int m = 0; m < p_.members; ++m) {
      if (!p_.has_output(m)) continue;
      outputs.push_back({reinterpret_cast<char*>(p_.out[m].data()), p_.output_count() * sizeof(T)});
      total += outputs.back().bytes;
    }
    shares_.resize(p_.members);
    int readers = 0;
    for (int m = 0; m < p_.members; ++m) readers += reads(m) ? 1 : 0;
    // The readers are the first `readers` members (needs_input).
    for (int r = 0; r < readers; ++r) {
      std::size_t lo = total * r / readers, hi = total * (r + 1) / readers, at = 0;
      for (const Segment& s : outputs) {
        const std::size_t a = std::max(lo, at), b = std::min(hi, at + s.bytes);
        if (a < b) shares_[r].push_back({s.to + (a - at), b - a});
        at += s.bytes;
      }
    }
    sinks_.resize(p_.members * 16);
  }

  double seconds_for(int calls) override {
    double seconds = 0;
    team_.run([&](Member& m) {
      m.barrier();
      const auto start = Clock::now();
      for (int c = 0; c < calls; ++c) {
        touch(m.rank());
        m.barrier();
      }
      if (m.rank() == 0) seconds = seconds_since(start);
    });
    return seconds;
  }

 private:
  bool reads(int m) const { return needs_input(p_.collective, m, p_.members); }

  void touch(int r) {
    if (!reads(r)) return;
    const char* in = reinterpret_cast<const char*>(p_.in[r].data());
    const std::size_t in_bytes = p_.count * sizeof(T);
    std::size_t read = 0;
    for (const Segment& s : shares_[r]) {
      copy_bytes(s.to, in + read, s.bytes);
      read += s.bytes;
    }
    sinks_[r * 16] += sum_words(in + read, in_bytes - read);
  }

  static long sum_words(const char* from, std::size_t bytes) {
    const auto* words = reinterpret_cast<const long*>(from);
    long sum = 0;
    for (std::size_t i = 0; i < bytes / sizeof(long); ++i) sum += words[i];
    return sum;
  }

  Team& team_;
  Problem<T>& p_;
  std::vector<std::vector<Segment>> shares_;
  std::vector<long> sinks_;  // one cache line apart per member
};

}  // namespace

HREDUCE_COMPARE_RUNNER(make_limit_runner, LimitRunner);

}  // namespace hreduce::detail::compare
