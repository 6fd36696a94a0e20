// The implementations a comparison run measures side by side. Each runner
// owns nothing but its threads' setup; the buffers are the Problem's, shared
// by every implementation so that all of them touch the same memory.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hreduce/team.hpp"
#include "src/common/level_clock.hpp"
#include "src/compare/problem.hpp"

namespace hreduce::detail::compare {

enum class Implementation { hreduce, openmp_reduction, openmp_sliced, tbb, limit };
inline constexpr Implementation kImplementations[] = {
    Implementation::hreduce, Implementation::openmp_reduction, Implementation::openmp_sliced,
    Implementation::tbb, Implementation::limit};

std::string_view name_of(Implementation implementation);

// The name of hreduce run at a reproducibility level other than the team's
// (run_to_run), in tables and records: "hreduce[exact]".
std::string hreduce_at_level_name(Reproducibility level);

// OpenMP's array-section reduction exists for reduce and allreduce only.
bool implements(Implementation implementation, Collective collective);

class Runner {
 public:
  virtual ~Runner() = default;
  // Runs `calls` back-to-back collectives on the Problem's buffers and
  // returns the seconds from a barrier before the first call to a barrier
  // after the last, on the clock of the first thread.
  virtual double seconds_for(int calls) = 0;
  // The time per level of one call of the last seconds_for, the mean over
  // the members; none unless the runner keeps it (hreduce with --breakdown).
  virtual std::optional<LevelSeconds> levels_per_call() const { return std::nullopt; }
};

// Every runner uses the team's members count and placement: its threads are
// pinned where the team's members are (when the topology is this machine).
template <class T>
std::unique_ptr<Runner> make_runner(Implementation implementation, Team& team, Problem<T>& problem);

template <class T>
std::unique_ptr<Runner> make_hreduce_runner(Team& team, Problem<T>& problem);
// hreduce with `options` passed to every call (the plain runner passes none,
// so it measures the team's defaults exactly as a user's call would).
template <class T>
std::unique_ptr<Runner> make_hreduce_runner(Team& team, Problem<T>& problem,
                                            const CollectiveOptions& options);
// hreduce as the plain runner, each member's calls timed per level
// (src/common/level_clock.hpp): `hreduce bench --breakdown`.
template <class T>
std::unique_ptr<Runner> make_hreduce_runner_with_levels(Team& team, Problem<T>& problem);
template <class T>
std::unique_ptr<Runner> make_openmp_reduction_runner(Team& team, Problem<T>& problem);
template <class T>
std::unique_ptr<Runner> make_openmp_sliced_runner(Team& team, Problem<T>& problem);
template <class T>
std::unique_ptr<Runner> make_tbb_runner(Team& team, Problem<T>& problem);
template <class T>
std::unique_ptr<Runner> make_limit_runner(Team& team, Problem<T>& problem);

// Defines `factory` above for every element type a comparison measures;
// each runner's file ends with one line naming its class.
#define HREDUCE_COMPARE_RUNNER(factory, RunnerClass)                       \
  template <class T>                                                       \
  std::unique_ptr<Runner> factory(Team& team, Problem<T>& problem) {       \
    return std::make_unique<RunnerClass<T>>(team, problem);                \
  }                                                                        \
  template std::unique_ptr<Runner> factory(Team&, Problem<double>&);       \
  template std::unique_ptr<Runner> factory(Team&, Problem<std::int32_t>&); \
  template std::unique_ptr<Runner> factory(Team&, Problem<MinLoc>&)

// One thread copying `bytes` (context for the limit: what a single core moves).
double memcpy_seconds(std::size_t bytes, int calls);

}  // namespace hreduce::detail::compare
