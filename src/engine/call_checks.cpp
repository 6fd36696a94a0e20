// The cold parts of a member's checks of its own call (call_checks.hpp):
// the reproducibility level's conditions and the names of types and ops.
#include "src/engine/call_checks.hpp"

#include <cxxabi.h>
#include <cstdlib>
#include <string_view>

#include "src/engine/exact_sum.hpp"

namespace hreduce::detail {

std::string demangle(const std::type_info* type) {
  if (type == nullptr) return "none";
  int status = 0;
  char* name = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string text = status == 0 && name ? name : type->name();
  std::free(name);
  return text;
}

std::string function_type(const std::type_info* op_type) {
  const std::string text = demangle(op_type);
  constexpr std::string_view kUserOp = "hreduce::UserOp<";
  if (!text.starts_with(kUserOp) || !text.ends_with('>')) return text;
  int depth = 0;
  for (std::size_t i = kUserOp.size(); i < text.size(); ++i) {
    if (text[i] == '<' || text[i] == '(' || text[i] == '{') ++depth;
    if (text[i] == '>' || text[i] == ')' || text[i] == '}') --depth;
    if (depth == 0 && text.compare(i, 2, ", ") == 0) {
      return text.substr(i + 2, text.size() - i - 3);
    }
  }
  return text;
}

std::string level_problem(const Call& call) {
  if (call.kind == CollectiveKind::barrier) return {};
  const CollectiveOptions& o = *call.options;
  if (o.reproducibility == Reproducibility::shape_independent && o.algorithm == Algorithm::tree) {
    return "options.reproducibility shape_independent cannot go with options.algorithm tree, "
           "whose bracketing follows the machine (use automatic or sliced)";
  }
  if (o.reproducibility == Reproducibility::exact && !exact_sum_applies(call.op)) {
    const std::string op = *call.op.op_name ? call.op.op_name : function_type(call.op.op_type);
    return message(
        "options.reproducibility exact is for op sum on float, double, "
        "std::complex<float> or std::complex<double>, not op ",
        op, " on ", demangle(call.op.type));
  }
  return {};
}

std::string member_problem(const Call& call, int rank, int size,
                           const CollectiveOptions& team_options) {
  return local_problem(call, rank, size, team_options);
}

}  // namespace hreduce::detail
