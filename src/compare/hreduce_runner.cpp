// hreduce itself, on the team's persistent workers.
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

  double seconds_for(int calls) override {
    double seconds = 0;
    team_.run([&](Member& m) {
      m.barrier();
      const auto start = Clock::now();
      for (int c = 0; c < calls; ++c) call(m);
      m.barrier();
      if (m.rank() == 0) seconds = seconds_since(start);
    });
    return seconds;
  }

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

  Team& team_;
  Problem<T>& p_;
  std::optional<CollectiveOptions> options_;
};

}  // namespace

HREDUCE_COMPARE_RUNNER(make_hreduce_runner, HreduceRunner);

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
