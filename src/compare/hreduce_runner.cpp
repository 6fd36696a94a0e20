// hreduce itself, on the team's persistent workers; with --breakdown each
// member's calls are timed per level (src/common/level_clock.hpp), its clock
// running over the same stretch as the sample's time: from the barrier
// before the first call to the end of the barrier after the last.
#include <memory>
#include <optional>

#include "src/compare/runner.hpp"
#include "src/compare/timing.hpp"

namespace hreduce::detail::compare {
namespace {

template <class T>
class HreduceRunner final : public Runner {
 public:
  HreduceRunner(Team& team, Problem<T>& problem) : team_(team), p_(problem) {}
  HreduceRunner(Team& team, Problem<T>& problem, const CollectiveOptions& options)
      : team_(team), p_(problem), options_(options) {}

  // Clocks for every member: levels_per_call() reports.
  void keep_levels() { clocks_ = std::make_unique<LevelClock[]>(team_.local_size()); }

  double seconds_for(int calls) override {
    double seconds = 0;
    team_.run([&](Member& m) {
      m.barrier();
      LevelClock* clock = clocks_ ? &clocks_[m.rank()] : nullptr;
      if (clock != nullptr) clock->start();
      const auto start = Clock::now();
      for (int c = 0; c < calls; ++c) call(m);
      m.barrier();
      if (m.rank() == 0) seconds = seconds_since(start);
      // After the barrier, as the sample's time: a member whose last call
      // ended early waits there, and that wait is part of the sample.
      if (clock != nullptr) clock->stop();
    });
    if (clocks_) gather_levels(calls);
    return seconds;
  }

  std::optional<LevelSeconds> levels_per_call() const override { return levels_; }

 private:
  void call(Member& m) {
    const T* in = p_.in[m.rank()].data();
    T* out = p_.out[m.rank()].data();
    const auto op = Element<T>::hreduce_op();
    const OptionsRef options = options_ ? OptionsRef(*options_) : OptionsRef();
    switch (p_.collective) {
      case Collective::reduce: m.reduce(in, out, p_.count, op, Problem<T>::root, options); break;
      case Collective::allreduce: m.allreduce(in, out, p_.count, op, options); break;
      case Collective::reduce_scatter_block:
        m.reduce_scatter_block(in, out, p_.block(), op, options);
        break;
      case Collective::scan: m.scan(in, out, p_.count, op, options); break;
      case Collective::exscan: m.exscan(in, out, p_.count, op, options); break;
      case Collective::reduce_scatter: break;  // not compared (kCollectives)
    }
  }

  // The members' mean per call, and the clocks cleared for the next sample.
  void gather_levels(int calls) {
    const int members = team_.local_size();
    LevelSeconds sum;
    for (int i = 0; i < members; ++i) {
      sum += clocks_[i].seconds();
      clocks_[i].reset();
    }
    levels_ = sum.scaled(1.0 / (static_cast<double>(members) * calls));
  }

  Team& team_;
  Problem<T>& p_;
  std::optional<CollectiveOptions> options_;
  std::unique_ptr<LevelClock[]> clocks_;
  std::optional<LevelSeconds> levels_;
};

}  // namespace

HREDUCE_COMPARE_RUNNER(make_hreduce_runner, HreduceRunner);

template <class T>
std::unique_ptr<Runner> make_hreduce_runner_with_levels(Team& team, Problem<T>& problem) {
  auto runner = std::make_unique<HreduceRunner<T>>(team, problem);
  runner->keep_levels();
  return runner;
}
template std::unique_ptr<Runner> make_hreduce_runner_with_levels(Team&, Problem<double>&);
template std::unique_ptr<Runner> make_hreduce_runner_with_levels(Team&, Problem<std::int32_t>&);
template std::unique_ptr<Runner> make_hreduce_runner_with_levels(Team&, Problem<MinLoc>&);

template <class T>
std::unique_ptr<Runner> make_hreduce_runner(Team& team, Problem<T>& problem,
                                            const CollectiveOptions& options) {
  return std::make_unique<HreduceRunner<T>>(team, problem, options);
}
template std::unique_ptr<Runner> make_hreduce_runner(Team&, Problem<double>&,
                                                     const CollectiveOptions&);
template std::unique_ptr<Runner> make_hreduce_runner(Team&, Problem<std::int32_t>&,
                                                     const CollectiveOptions&);
template std::unique_ptr<Runner> make_hreduce_runner(Team&, Problem<MinLoc>&,
                                                     const CollectiveOptions&);

}  // namespace hreduce::detail::compare
