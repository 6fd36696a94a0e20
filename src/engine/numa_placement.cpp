#include "src/engine/numa_placement.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "hreduce/error.hpp"
#include "src/engine/local_decision.hpp"

namespace hreduce::detail {

NumaPlan plan_numa(const Topology& topology, const Placement& placement) {
  NumaPlan plan;
  for (int r = 0; r < placement.members(); ++r) {
    const int pu = placement.pu_of_member[r];
    if (pu < 0 || pu >= topology.pu_count()) {
      throw ArgumentError("plan_numa: member " + std::to_string(r) + " is placed on PU " +
                          std::to_string(pu) + ", but the machine has PUs 0.." +
                          std::to_string(topology.pu_count() - 1));
    }
    plan.numa_of_member.push_back(topology.pus()[pu].in(Level::numa));
  }
  plan.member_of_slice.resize(plan.numa_of_member.size());
  std::iota(plan.member_of_slice.begin(), plan.member_of_slice.end(), 0);
  // Stable: members of one node keep rank order among themselves.
  std::stable_sort(plan.member_of_slice.begin(), plan.member_of_slice.end(),
                   [&](int a, int b) { return plan.numa_of_member[a] < plan.numa_of_member[b]; });
  plan.slice_of_member.resize(plan.member_of_slice.size());
  for (int s = 0; s < plan.members(); ++s) plan.slice_of_member[plan.member_of_slice[s]] = s;
  return plan;
}

std::vector<NumaRange> numa_spans(const NumaPlan& plan, std::size_t count, std::size_t elem_size) {
  std::vector<NumaRange> spans;
  for (int s = 0; s < plan.members(); ++s) {
    const Slice slice = slice_of(s, plan.members(), count, elem_size);
    if (slice.size() == 0) continue;
    const int numa = plan.numa_of_slice(s);
    if (!spans.empty() && spans.back().numa == numa) {
      spans.back().hi = slice.hi * elem_size;
    } else {
      spans.push_back({slice.lo * elem_size, slice.hi * elem_size, numa});
    }
  }
  return spans;
}

std::vector<NumaRange> page_spans(const NumaPlan& plan, std::size_t bytes, std::size_t page_bytes) {
  std::vector<NumaRange> pages;
  for (const NumaRange& span : numa_spans(plan, bytes, 1)) {
    // The pages whose first byte lies in the span.
    const std::size_t lo = (span.lo + page_bytes - 1) / page_bytes * page_bytes;
    const std::size_t hi = (span.hi + page_bytes - 1) / page_bytes * page_bytes;
    if (lo >= hi) continue;
    if (!pages.empty() && pages.back().numa == span.numa) {
      pages.back().hi = hi;
    } else {
      pages.push_back({lo, hi, span.numa});
    }
  }
  return pages;
}

}  // namespace hreduce::detail
