#include "src/compare/comparison.hpp"

#include <algorithm>
#include <memory>

#include "hreduce/error.hpp"

namespace hreduce::detail::compare {
namespace {

template <class T>
CaseResult measure(Team& team, const Case& c, const std::vector<Implementation>& implementations,
                   const SamplingOptions& sampling) {
  const int p = team.local_size();
  Problem<T> problem(c.collective, p, element_count<T>(c.collective, p, c.bytes_per_member));
  CaseResult result;
  std::vector<std::unique_ptr<Runner>> owned;
  std::vector<Runner*> runners;
  std::vector<Implementation> measured;
  for (Implementation implementation : implementations) {
    if (!implements(implementation, c.collective)) continue;
    auto runner = make_runner(implementation, team, problem);
    // The limit computes nothing; everything else must match the oracle.
    if (implementation != Implementation::limit) {
      problem.clear_outputs();
      runner->seconds_for(1);
      if (problem.first_wrong_member() >= 0) {
        result.wrong.emplace_back(name_of(implementation));
      }
    }
    runners.push_back(runner.get());
    owned.push_back(std::move(runner));
    measured.push_back(implementation);
  }
  const std::vector<Summary> summaries = sample_interleaved(runners, sampling);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    Record r;
    r.collective = name_of(c.collective);
    r.implementation = name_of(measured[i]);
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

CaseResult measure_case(Team& team, const Case& c, const std::vector<Implementation>& implementations,
                        const SamplingOptions& sampling) {
  check_type(c.type);
  if (c.type == "int32") return measure<std::int32_t>(team, c, implementations, sampling);
  if (c.type == "double_int") return measure<MinLoc>(team, c, implementations, sampling);
  return measure<double>(team, c, implementations, sampling);
}

}  // namespace hreduce::detail::compare
