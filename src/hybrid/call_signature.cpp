#include "src/hybrid/call_signature.hpp"

#include <typeinfo>

#include "src/common/hash.hpp"

namespace hreduce::detail {
namespace {

// A lambda op's mangled name runs to a hundred characters, and hashing it
// on every call was a fifth of a small call's own time (perf): each thread
// keeps the last few.
std::uint64_t name_hash(const std::type_info* type) {
  struct Seen {
    const std::type_info* type = nullptr;
    std::uint64_t hash = 0;
  };
  // Fully associative: a call's element type and op type must not evict
  // each other.
  constexpr int kSeen = 8;
  thread_local Seen seen[kSeen];
  thread_local int next = 0;
  if (type != nullptr) {
    for (const Seen& entry : seen) {
      if (entry.type == type) return entry.hash;
    }
  }
  std::uint64_t h = 1469598103934665603ull;
  for (const char* c = type ? type->name() : ""; *c; ++c) {
    h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  }
  seen[next] = {type, h};
  next = (next + 1) % kSeen;
  return h;
}

}  // namespace

std::uint64_t process_call_signature(CollectiveKind kind, std::size_t count, int root,
                                     const ErasedOp& op, Reproducibility level,
                                     const std::size_t* counts, int members) {
  std::uint64_t h = mix(0, static_cast<std::uint64_t>(kind));
  h = mix(h, count);
  h = mix(h, static_cast<std::uint64_t>(kind == CollectiveKind::reduce ? root : 0));
  h = mix(h, op.elem_size);
  h = mix(h, name_hash(op.type));
  h = mix(h, name_hash(op.op_type));
  if (kind == CollectiveKind::reduce_scatter && counts != nullptr) {
    for (int r = 0; r < members; ++r) h = mix(h, counts[r]);
  }
  // It picks the path (shape_independent takes the processes' chain):
  // processes that differ must fail together, not wait for each other on
  // different paths.
  h = mix(h, static_cast<std::uint64_t>(level));
  return h;
}

}  // namespace hreduce::detail
