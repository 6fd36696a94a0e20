// The `exact` reproducibility level (options.hpp): op::sum on float, double
// and their complex forms, delivered as the correctly rounded sum of all
// members' values, whatever the order, the layout or the team size.
#pragma once

#include <string>

#include "src/engine/process_step.hpp"

namespace hreduce::detail {

class MemberState;

// Whether `exact` can be delivered for this op: op::sum on float, double,
// std::complex<float> or std::complex<double>.
bool exact_sum_applies(const ErasedOp& op);

// Runs `call` (exact_sum_applies(call.op)) on any team: one or several
// processes, any path.
void execute_exact_sum(MemberState& me, const Call& call);

}  // namespace hreduce::detail
