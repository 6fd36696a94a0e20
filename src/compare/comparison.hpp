// One case of a comparison run — a collective, an element type and a vector
// size — measured for every implementation that has it, after checking each
// implementation's result against the sequential oracle.
#pragma once

#include <string>
#include <vector>

#include "hreduce/team.hpp"
#include "src/compare/record.hpp"
#include "src/compare/runner.hpp"
#include "src/compare/sampling.hpp"

namespace hreduce::detail::compare {

struct Case {
  Collective collective = Collective::allreduce;
  std::string type = "double";  // double, int32 or double_int (MINLOC)
  std::size_t bytes_per_member = 8;
};

struct CaseResult {
  std::vector<Record> records;     // one per implementation measured
  std::vector<std::string> wrong;  // implementations whose result differed from the oracle
  // Levels hreduce cannot give this case, each "hreduce[L]: why" (not measured).
  std::vector<std::string> skipped;
};

// Element types a case may name, and whether `type` is one (throws Error
// naming the bad type otherwise).
const std::vector<std::string>& element_types();
void check_type(const std::string& type);

// `team` supplies the members (one process), their placement and the
// threads hreduce and the limit run on. Implementations that do not have
// the collective are skipped. Each of `levels` (other than run_to_run) adds
// hreduce with per-call options at that level, named hreduce_at_level_name,
// right after plain hreduce and sampled in the same rounds; a level hreduce
// cannot give this case's type and op is listed in CaseResult::skipped.
CaseResult measure_case(Team& team, const Case& c,
                        const std::vector<Implementation>& implementations,
                        const SamplingOptions& sampling,
                        const std::vector<Reproducibility>& levels = {});

}  // namespace hreduce::detail::compare
