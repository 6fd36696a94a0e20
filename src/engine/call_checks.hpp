// What a member checks of its own call before announcing it, and the
// signature the agreement check compares (execute.cpp): the local checks
// of step 1 and the digest of step 4. Inline where every call runs them.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <typeinfo>

#include "src/common/hash.hpp"
#include "src/engine/collectives.hpp"

namespace hreduce::detail {

inline bool uses_counts(CollectiveKind kind) { return kind == CollectiveKind::reduce_scatter; }

// A type's name for people ("none" for null).
std::string demangle(const std::type_info* type);
// A user op's function type, "main()::{lambda(int, int)#1}", out of
// "hreduce::UserOp<int, main()::{lambda(int, int)#1}>".
std::string function_type(const std::type_info* op_type);

// Builds an error message from pieces; only error paths call it.
template <class... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream text;
  (text << ... << parts);
  return text.str();
}

// Why this call cannot have the reproducibility level it asks for; empty
// when it can. Only calls asking for more than run_to_run come here.
[[gnu::cold, gnu::noinline]] std::string level_problem(const Call& call);

inline bool overlap_partially(const void* a, std::size_t a_bytes, const void* b,
                              std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x != y && x < y + b_bytes && y < x + a_bytes;
}

// This member's own argument errors; empty when fine. The fine path builds
// no strings: it runs on every call (inline: out of line, the call alone
// was a large share of a one-member call).
// `team_options`: the team's defaults, validated when it was built.
[[gnu::always_inline]] inline std::string local_problem(const Call& call, int rank, int size,
                                                        const CollectiveOptions& team_options) {
  if (is_internal(call.kind)) return {};
  if (call.options != &team_options && !options_valid(*call.options)) {
    return options_problem(*call.options);
  }
  if (call.options->reproducibility != Reproducibility::run_to_run) [[unlikely]] {
    if (std::string why = level_problem(call); !why.empty()) return why;
  }
  if (call.kind == CollectiveKind::reduce && (call.root < 0 || call.root >= size)) {
    return message("root ", call.root, " is outside 0..", size - 1);
  }
  if (uses_counts(call.kind)) {
    if (call.count != static_cast<std::size_t>(size)) {
      return message("counts has ", call.count, " entries but the team has ", size, " members");
    }
    if (call.counts == nullptr) return "counts is a null pointer";
  }
  const std::size_t in_n = input_elements(call, size);
  const std::size_t out_n = output_elements(call, rank);
  const bool in_place = call.in == call.out;
  if (in_n > 0 && call.in == nullptr) {
    return message("in is a null pointer but holds ", in_n, " elements");
  }
  if (out_n > 0 && call.out == nullptr) {
    return message("out is a null pointer but must receive ", out_n, " elements");
  }
  if (call.in_size != SIZE_MAX && call.in_size < in_n) {
    return message("in has ", call.in_size, " elements but ", in_n, " are needed");
  }
  const std::size_t out_needed = in_place ? in_n : out_n;
  if (call.out_size != SIZE_MAX && call.out_size < out_needed) {
    return message(in_place ? "the in-place buffer" : "out", " has ", call.out_size,
                   " elements but ", out_needed, " are needed");
  }
  if (!in_place && call.out != nullptr &&
      overlap_partially(call.in, in_n * call.op.elem_size, call.out, out_n * call.op.elem_size)) {
    return "out partially overlaps in (pass the same pointer for in place)";
  }
  return {};
}

// Every field that must agree across members, in one word.
inline std::uint64_t signature_of(const Descriptor& d, int size) {
  // The small fields share words: fewer rounds on a path every call takes.
  const auto low = [](auto v, int bits) {
    return static_cast<std::uint64_t>(v) & ((std::uint64_t{1} << bits) - 1);
  };
  const auto root = static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.root));
  std::uint64_t h =
      mix(0, low(d.kind, 8) | low(d.options.algorithm, 8) << 8 | low(d.options.tree, 8) << 16 |
                 low(d.options.reproducibility, 8) << 24 | root << 32);
  h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.options.radix)) |
                 static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.options.tree_min_members))
                     << 32);
  if (!is_internal(d.kind)) h = mix(h, d.count);
  h = mix(h, d.elem_size);
  h = mix(h, reinterpret_cast<std::uintptr_t>(d.type));
  h = mix(h, reinterpret_cast<std::uintptr_t>(d.op_type));
  h = mix(h, d.options.chunk_bytes);
  h = mix(h, d.options.tree_max_bytes);
  if (uses_counts(d.kind) && d.counts != nullptr && d.count == static_cast<std::size_t>(size)) {
    for (std::size_t i = 0; i < d.count; ++i) h = mix(h, d.counts[i]);
  }
  return h;
}

}  // namespace hreduce::detail
