// Argument checks shared by the inter-process algorithms. They run before an
// algorithm sends anything, and every participant passes the same op, so
// either all participants throw or none does: nobody is left waiting.
#include <string>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"

namespace hreduce::detail::inter {

void require_commutative(const ErasedOp& op, const char* algorithm) {
  if (op.commutative) return;
  throw ArgumentError(std::string(algorithm) +
                      ": needs a commutative op, got the non-commutative op \"" + op.op_name +
                      "\"");
}

}  // namespace hreduce::detail::inter
