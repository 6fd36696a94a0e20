#include "src/compare/runner.hpp"

#include <cstring>
#include <vector>

#include "src/compare/timing.hpp"

namespace hreduce::detail::compare {

std::string_view name_of(Collective collective) { return to_string(collective); }

std::string_view name_of(Implementation implementation) {
  switch (implementation) {
    case Implementation::hreduce: return "hreduce";
    case Implementation::openmp_reduction: return "openmp_reduction";
    case Implementation::openmp_sliced: return "openmp_sliced";
    case Implementation::tbb: return "tbb";
    case Implementation::limit: return "limit";
  }
  return "?";
}

std::string hreduce_at_level_name(Reproducibility level) {
  return "hreduce[" + std::string(to_string(level)) + "]";
}

bool implements(Implementation implementation, Collective collective) {
  if (implementation != Implementation::openmp_reduction) return true;
  return collective == Collective::reduce || collective == Collective::allreduce;
}

template <class T>
std::unique_ptr<Runner> make_runner(Implementation implementation, Team& team,
                                    Problem<T>& problem) {
  switch (implementation) {
    case Implementation::hreduce: return make_hreduce_runner(team, problem);
    case Implementation::openmp_reduction: return make_openmp_reduction_runner(team, problem);
    case Implementation::openmp_sliced: return make_openmp_sliced_runner(team, problem);
    case Implementation::tbb: return make_tbb_runner(team, problem);
    case Implementation::limit: return make_limit_runner(team, problem);
  }
  return nullptr;
}

template std::unique_ptr<Runner> make_runner(Implementation, Team&, Problem<double>&);
template std::unique_ptr<Runner> make_runner(Implementation, Team&, Problem<std::int32_t>&);
template std::unique_ptr<Runner> make_runner(Implementation, Team&, Problem<MinLoc>&);

// glibc's memcpy on purpose: this is the copy a user's program gets.
double memcpy_seconds(std::size_t bytes, int calls) {
  std::vector<char> from(bytes, 1), to(bytes);
  const auto start = Clock::now();
  for (int c = 0; c < calls; ++c) {
    std::memcpy(to.data(), from.data(), bytes);
    asm volatile("" : : "r"(to.data()) : "memory");
  }
  return seconds_since(start);
}

}  // namespace hreduce::detail::compare
