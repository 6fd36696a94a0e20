#include "src/compare/comparison.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

#include "hreduce/error.hpp"

namespace hreduce::detail::compare {
namespace {

// The runners of one case, each with the name its record takes.
struct Lineup {
  std::vector<std::unique_ptr<Runner>> owned;
  std::vector<Runner*> runners;
  std::vector<std::string> names;

  void add(std::unique_ptr<Runner> runner, std::string name) {
    runners.push_back(runner.get());
    owned.push_back(std::move(runner));
    names.push_back(std::move(name));
  }
};

// One call on cleared outputs: whatever a runner computes must match the oracle.
template <class T>
void check_one_call(Runner& runner, Problem<T>& problem, const std::string& name,
                    CaseResult& result) {
  problem.clear_outputs();
  runner.seconds_for(1);
  if (problem.first_wrong_member() >= 0) result.wrong.push_back(name);
}

// Why hreduce cannot reduce T at `level`, or empty. exact is the correctly
// rounded sum (options.hpp): op::sum on floating types only; the engine
// refuses any other call at that level, so the bench does not make one.
template <class T>
std::string level_unavailable(Reproducibility level) {
  if (level != Reproducibility::exact) return "";
  if (std::is_floating_point_v<T> && Element<T>::op == "sum") return "";
  return "exact is op::sum on floating types only, not " + std::string(Element<T>::op) + " on " +
         std::string(Element<T>::type);
}

// hreduce at each of `levels`, with the team's options but for the level.
template <class T>
void add_levels(Team& team, Problem<T>& problem, const std::vector<Reproducibility>& levels,
                Lineup& lineup, CaseResult& result) {
  for (Reproducibility level : levels) {
    if (level == Reproducibility::run_to_run) continue;  // plain hreduce already is
    const std::string name = hreduce_at_level_name(level);
    const std::string why_not = level_unavailable<T>(level);
    if (!why_not.empty()) {
      result.skipped.push_back(name + ": " + why_not);
      continue;
    }
    CollectiveOptions options = team.options().collectives;
    options.reproducibility = level;
    auto runner = make_hreduce_runner(team, problem, options);
    check_one_call(*runner, problem, name, result);
    lineup.add(std::move(runner), name);
  }
}

template <class T>
CaseResult measure(Team& team, const Case& c, const std::vector<Implementation>& implementations,
                   const SamplingOptions& sampling, const std::vector<Reproducibility>& levels) {
  const int p = team.local_size();
  Problem<T> problem(c.collective, p, element_count<T>(c.collective, p, c.bytes_per_member));
  CaseResult result;
  Lineup lineup;
  for (Implementation implementation : implementations) {
    if (!implements(implementation, c.collective)) continue;
    auto runner = implementation == Implementation::hreduce && sampling.breakdown
                      ? make_hreduce_runner_with_levels(team, problem)
                      : make_runner(implementation, team, problem);
    const std::string name(name_of(implementation));
    // The limit computes nothing to check.
    if (implementation != Implementation::limit) check_one_call(*runner, problem, name, result);
    lineup.add(std::move(runner), name);
    if (implementation == Implementation::hreduce) {
      add_levels(team, problem, levels, lineup, result);
    }
  }
  const std::vector<Summary> summaries = sample_interleaved(lineup.runners, sampling);
  for (std::size_t i = 0; i < lineup.names.size(); ++i) {
    Record r;
    r.collective = name_of(c.collective);
    r.implementation = lineup.names[i];
    r.type = Element<T>::type;
    r.op = Element<T>::op;
    r.members = p;
    r.bytes_per_member = problem.count * sizeof(T);
    set_timing(r, summaries[i], problem.moved_bytes());
    result.records.push_back(std::move(r));
  }
  return result;
}

}  // namespace

const std::vector<std::string>& element_types() {
  static const std::vector<std::string> types = {"double", "int32", "double_int"};
  return types;
}

void check_type(const std::string& type) {
  for (const auto& t : element_types()) {
    if (t == type) return;
  }
  throw ArgumentError("hreduce bench: element type '" + type +
                      "' is not one of double, int32, double_int");
}

CaseResult measure_case(Team& team, const Case& c,
                        const std::vector<Implementation>& implementations,
                        const SamplingOptions& sampling,
                        const std::vector<Reproducibility>& levels) {
  check_type(c.type);
  if (c.type == "int32") return measure<std::int32_t>(team, c, implementations, sampling, levels);
  if (c.type == "double_int") return measure<MinLoc>(team, c, implementations, sampling, levels);
  return measure<double>(team, c, implementations, sampling, levels);
}

}  // namespace hreduce::detail::compare
