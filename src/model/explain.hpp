// The model speaks for the runtime's decisions: for one call, every path
// and algorithm the runtime could have taken at each level, forced one at
// a time through the same overrides a program has (CollectiveOptions'
// algorithm, HREDUCE_NODE_SINGLE_COPY, the inter-process algorithm), each
// with its predicted time, the runtime's own choice marked.
//
// It lives in the model layer and takes a team's description (machine,
// layout, call), so the engine never depends on the model: `hreduce
// predict --explain` prints it beside each prediction (docs/model.md).
#pragma once

#include <string>
#include <vector>

#include "src/model/prediction.hpp"

namespace hreduce::detail::model {

struct Candidate {
  std::string level;  // "inside a process", "node level", "between processes"
  std::string what;   // "tree", "single copy off", "ring", ...
  double seconds = 0;
  bool chosen = false;  // what the runtime picks with its default options
};

// The runtime's choice first at each level, then the alternatives that
// serve this call; a level the layout lacks has no candidates.
std::vector<Candidate> explain_candidates(const MachinePrices& prices, const Topology& node,
                                          const Layout& layout, const CallCase& call,
                                          const ModelSettings& settings);

}  // namespace hreduce::detail::model
