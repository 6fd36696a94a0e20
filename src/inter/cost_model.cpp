// Choosing an inter-process algorithm from the α–β cost model: a message of
// m bytes costs α + mβ, every algorithm's time is a count of start-ups plus
// a count of bytes on the critical path (the formulas of docs/spec.md and of each
// algorithm file), and the cheapest candidate wins. No thresholds live here:
// moving the crossover means changing α or β, which can be measured.
//
//   allreduce, α = 2 µs, β = 0.2 ns/B, P = 16 (powers of two)
//     m = 1 KiB    recursive doubling 8.8 µs    rabenseifner 16.4 µs   ring 60.4 µs
//     m = 1 MiB    recursive doubling 847 µs    rabenseifner 409 µs    ring 453 µs
//
// The choice is a pure function of (P, bytes, commutative, model), so every
// participant that asks makes the same choice.
#include <array>
#include <cstdio>
#include <iterator>
#include <string>

#include "hreduce/error.hpp"
#include "src/common/enum_names.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail {

namespace {

// The names of the inter-process algorithms, as the explanations write them.
constexpr EnumName<InterAlgorithm> kInterAlgorithmNames[] = {
    {InterAlgorithm::automatic, "automatic"},
    {InterAlgorithm::binomial, "binomial"},
    {InterAlgorithm::recursive_doubling, "recursive_doubling"},
    {InterAlgorithm::rabenseifner, "rabenseifner"},
    {InterAlgorithm::ring, "ring"},
    {InterAlgorithm::hypercube, "hypercube"},
    {InterAlgorithm::pairwise, "pairwise"},
    {InterAlgorithm::reduce_then_scatter, "reduce_then_scatter"},
};
static_assert(enum_names_distinct(kInterAlgorithmNames));

int ceil_log2(int P) {
  int steps = 0;
  for (long long span = 1; span < P; span *= 2) ++steps;
  return steps;
}

bool is_power_of_two(int P) { return P > 0 && (P & (P - 1)) == 0; }

std::string microseconds(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f µs", seconds * 1e6);
  return text;
}

std::string header(const char* collective, int P, std::size_t bytes, const CostModel& model) {
  char text[160];
  std::snprintf(text, sizeof text,
                "%s of %zu B over %d participants (α = %g µs, β = %g ns/B): ", collective, bytes, P,
                model.alpha_seconds * 1e6, model.beta_seconds_per_byte * 1e9);
  return text;
}

void check_participants(const char* function, int P) {
  if (P < 1) {
    throw ArgumentError(std::string(function) + ": participant count must be >= 1, got " +
                        std::to_string(P));
  }
}

}  // namespace

std::string_view to_string(InterAlgorithm algorithm) {
  return enum_name(kInterAlgorithmNames, algorithm);
}

std::optional<InterAlgorithm> parse_inter_algorithm(std::string_view name) {
  return enum_value(kInterAlgorithmNames, name);
}

namespace {

struct Candidate {
  InterAlgorithm algorithm;
  double seconds;
  bool allowed;
};

// The allreduce candidates and their predicted times (see inter.hpp).
std::array<Candidate, 3> allreduce_candidates(int P, std::size_t bytes, bool commutative,
                                              const CostModel& model) {
  const double a = model.alpha_seconds;
  const double mb = static_cast<double>(bytes) * model.beta_seconds_per_byte;
  const double L = ceil_log2(P);
  const double fraction = static_cast<double>(P - 1) / P;
  const double fold = is_power_of_two(P) ? 0.0 : 2 * (a + mb);
  return {{{InterAlgorithm::recursive_doubling, L * (a + mb) + fold, true},
           {InterAlgorithm::rabenseifner, 2 * a * L + 2 * mb * fraction + fold, true},
           {InterAlgorithm::ring, 2 * (P - 1) * a + 2 * mb * fraction, commutative}}};
}

}  // namespace

InterAlgorithm cheapest_allreduce(int P, std::size_t bytes, bool commutative,
                                  const CostModel& model) {
  check_participants("cheapest_allreduce", P);
  InterAlgorithm best = InterAlgorithm::automatic;
  double best_seconds = 0;
  for (const Candidate& c : allreduce_candidates(P, bytes, commutative, model)) {
    if (c.allowed && (best == InterAlgorithm::automatic || c.seconds < best_seconds)) {
      best = c.algorithm;
      best_seconds = c.seconds;
    }
  }
  return best;
}

Choice choose_allreduce(int P, std::size_t bytes, bool commutative, const CostModel& model) {
  check_participants("choose_allreduce", P);
  Choice choice{cheapest_allreduce(P, bytes, commutative, model), {}};
  const auto candidates = allreduce_candidates(P, bytes, commutative, model);
  std::string why = header("allreduce", P, bytes, model);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    why +=
        (i > 0 ? ", " : "") + std::string(to_string(c.algorithm)) + ' ' + microseconds(c.seconds);
    if (!c.allowed) why += " (not a candidate: needs a commutative op)";
  }
  choice.why = why + " -> " + std::string(to_string(choice.algorithm));
  return choice;
}

Choice choose_reduce_scatter(int P, std::size_t total_bytes, bool commutative,
                             const CostModel& model) {
  check_participants("choose_reduce_scatter", P);
  const double a = model.alpha_seconds;
  const double mb = static_cast<double>(total_bytes) * model.beta_seconds_per_byte;
  const double pairwise = (P - 1) * a + mb * (P - 1) / P;
  const double reduce_scatter = ceil_log2(P) * (a + mb) + (P - 1) * (a + mb / P);
  Choice choice;
  choice.algorithm = commutative ? InterAlgorithm::pairwise : InterAlgorithm::reduce_then_scatter;
  choice.why =
      header("reduce_scatter", P, total_bytes, model) + "pairwise " + microseconds(pairwise) +
      (commutative ? "" : " (not a candidate: needs a commutative op)") + ", reduce_then_scatter " +
      microseconds(reduce_scatter) + " -> " + std::string(to_string(choice.algorithm)) +
      (commutative ? " (commutative op)" : " (non-commutative op)");
  return choice;
}

namespace {

// ⌈log2 P⌉(α + mβ): one whole-vector message per level of a log-depth tree.
double log_tree_seconds(int P, std::size_t bytes, const CostModel& model) {
  return ceil_log2(P) *
         (model.alpha_seconds + static_cast<double>(bytes) * model.beta_seconds_per_byte);
}

}  // namespace

Choice choose_reduce(int P, std::size_t bytes, bool /*commutative*/, const CostModel& model) {
  check_participants("choose_reduce", P);
  const double t = log_tree_seconds(P, bytes, model);
  return {InterAlgorithm::binomial, header("reduce", P, bytes, model) +
                                        "binomial ⌈log2 P⌉(α + mβ) = " + microseconds(t) +
                                        " (+ one α + mβ when the root is not 0) -> binomial"};
}

Choice choose_scan(int P, std::size_t bytes, bool /*commutative*/, const CostModel& model) {
  check_participants("choose_scan", P);
  const double t = log_tree_seconds(P, bytes, model);
  return {InterAlgorithm::hypercube, header("scan", P, bytes, model) +
                                         "hypercube ⌈log2 P⌉(α + mβ) = " + microseconds(t) +
                                         " -> hypercube"};
}

}  // namespace hreduce::detail
