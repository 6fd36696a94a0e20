// `hreduce bench --mpi`'s preamble: team.explain() for each collective,
// with what they share said once.
#include "src/cli/mpi_preamble.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace hreduce::cli {
namespace {

using detail::compare::Collective;
using detail::compare::name_of;

// explain()'s text cut at its "; " separators, and put back together.
std::vector<std::string> split_clauses(const std::string& text) {
  std::vector<std::string> clauses;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find("; ", from)) != std::string::npos; from = at + 2) {
    clauses.push_back(text.substr(from, at - from));
  }
  clauses.push_back(text.substr(from));
  return clauses;
}

std::string joined(const std::vector<std::string>& clauses) {
  std::string text;
  for (const std::string& clause : clauses) text += (text.empty() ? "" : "; ") + clause;
  return text;
}

}  // namespace

void print_explanations(Team& team, const std::vector<Collective>& collectives, std::size_t bytes) {
  std::vector<std::vector<std::string>> clauses;
  for (Collective kind : collectives) {
    std::string text = team.explain(kind, bytes);
    // "allreduce of 64 bytes ..." reads "a call of 64 bytes ..." once shared.
    const std::string name(name_of(kind));
    if (text.compare(0, name.size() + 1, name + " ") == 0)
      text = "a call" + text.substr(name.size());
    clauses.push_back(split_clauses(text));
  }
  std::vector<std::string> shared;
  for (const std::string& clause : clauses.front()) {
    const bool everywhere = std::all_of(clauses.begin(), clauses.end(), [&](const auto& list) {
      return std::find(list.begin(), list.end(), clause) != list.end();
    });
    if (everywhere && collectives.size() > 1) shared.push_back(clause);
  }
  if (!shared.empty()) std::printf("  every collective: %s\n", joined(shared).c_str());
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    std::vector<std::string> own;
    for (const std::string& clause : clauses[i]) {
      if (std::find(shared.begin(), shared.end(), clause) == shared.end()) own.push_back(clause);
    }
    std::printf("  %s: %s\n", std::string(name_of(collectives[i])).c_str(),
                own.empty() ? "as above" : joined(own).c_str());
  }
}

}  // namespace hreduce::cli
