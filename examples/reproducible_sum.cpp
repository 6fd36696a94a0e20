// Exact sums: 1e16 + 1 − 1e16 summed in rank order loses the 1 (1e16 + 1
// rounds back to 1e16), whatever the runtime; with
// reproducibility = exact it is 1 on a team of 3 and on a team of 7 that
// holds the same values at other ranks, the others adding 0.
// Run: bazel run //examples:reproducible_sum
#include <cstdio>
#include <vector>

#include "hreduce/team.hpp"

namespace {

// The sum of `values`, held by the members at `holders`, on a team of
// `members`, at `level`.
double sum_on(int members, const std::vector<double>& values, const std::vector<int>& holders,
              hreduce::Reproducibility level) {
  hreduce::TeamOptions options;
  options.members = members;
  hreduce::Team team(options);
  hreduce::CollectiveOptions call;
  call.reproducibility = level;
  double result = 0;
  team.run([&](hreduce::Member& m) {
    double mine = 0.0, sum = 0.0;
    for (std::size_t k = 0; k < holders.size(); ++k) {
      if (holders[k] == m.rank()) mine = values[k];
    }
    m.allreduce(&mine, &sum, 1, hreduce::op::sum, call);
    if (m.rank() == 0) result = sum;
  });
  return result;
}

}  // namespace

int main() {
  const std::vector<double> values = {1e16, 1.0, -1e16};
  const double in_rank_order = sum_on(3, values, {0, 1, 2}, hreduce::Reproducibility::run_to_run);
  const double exact_on_3 = sum_on(3, values, {0, 1, 2}, hreduce::Reproducibility::exact);
  const double exact_on_7 = sum_on(7, values, {6, 2, 4}, hreduce::Reproducibility::exact);
  std::printf("1e16 + 1 - 1e16: in rank order %g; exact on 3 members %g, on 7 members %g\n",
              in_rank_order, exact_on_3, exact_on_7);
  return in_rank_order == 0.0 && exact_on_3 == 1.0 && exact_on_7 == 1.0 ? 0 : 1;
}
