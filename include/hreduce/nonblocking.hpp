// The nonblocking and persistent forms of every collective, on Member
// (hreduce/team.hpp derives Member from NonblockingForms): docs/nonblocking.md.
//
//   hreduce::Request r = m.iallreduce(in, out, n, op::sum);     // starts the call
//   hreduce::PersistentRequest p = m.allreduce_init(in, out, n, op::sum);  // prepares it
//
// Each takes the arguments of its blocking form, in its three shapes
// (pointers and a count, ranges, one range in place) with or without
// per-call options. The request keeps copies of the op, the options and
// reduce_scatter's counts; the buffers are the caller's, in use until the
// request completes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <type_traits>

#define HREDUCE_PUBLIC_HEADER  // lets the detail headers in (they refuse direct includes)
#include "hreduce/detail/call.hpp"
#include "hreduce/request.hpp"

namespace hreduce::detail {

class MemberState;

// Publishes the call (or, persistent, only prepares it) and returns its
// handle (src/engine/nonblocking/request.cpp). `team_defaults`: the call
// passed no options of its own.
RequestHandle issue_call(MemberState& member, const CallArgs& call, bool team_defaults,
                         std::unique_ptr<KeptOp> kept_op, bool persistent);

// A stateless op needs no copy: its one instance lives as long as the program.
template <class Op>
inline constexpr Op kStatelessOp{};

template <class Op>
inline constexpr bool kStateless =
    std::is_empty_v<Op>&& std::is_trivially_default_constructible_v<Op>;

template <class M>
class NonblockingForms {
 public:
  // --- nonblocking: start the call, return its request forms
  template <class T, class Op>
  Request ireduce(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op, int root,
                  OptionsRef options = {}) {
    return RequestAccess::request(
        issue<T>(false, op, CollectiveKind::reduce, in, out, n, options, root));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  Request ireduce(const In& in, Out&& out, const Op& op, int root, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::reduce, in, out,
                                               std::ranges::size(in), options, root));
  }
  template <InOutRange InOut, class Op>
  Request ireduce(InOut&& inout, const Op& op, int root, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::reduce, inout, inout,
                                               std::ranges::size(inout), options, root));
  }
  template <class T, class Op>
  Request iallreduce(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op,
                     OptionsRef options = {}) {
    return RequestAccess::request(
        issue<T>(false, op, CollectiveKind::allreduce, in, out, n, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  Request iallreduce(const In& in, Out&& out, const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::allreduce, in, out,
                                               std::ranges::size(in), options));
  }
  template <InOutRange InOut, class Op>
  Request iallreduce(InOut&& inout, const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::allreduce, inout, inout,
                                               std::ranges::size(inout), options));
  }
  template <class T, class Op>
  Request ireduce_scatter(const T* in, std::type_identity_t<T>* out,
                          std::span<const std::size_t> counts, const Op& op,
                          OptionsRef options = {}) {
    return RequestAccess::request(issue<T>(false, op, CollectiveKind::reduce_scatter, in, out,
                                           counts.size(), options, 0, SIZE_MAX, SIZE_MAX,
                                           counts.data()));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  Request ireduce_scatter(const In& in, Out&& out, std::span<const std::size_t> counts,
                          const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::reduce_scatter, in, out,
                                               counts.size(), options, 0, counts.data()));
  }
  template <InOutRange InOut, class Op>
  Request ireduce_scatter(InOut&& inout, std::span<const std::size_t> counts, const Op& op,
                          OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::reduce_scatter, inout,
                                               inout, counts.size(), options, 0, counts.data()));
  }
  template <class T, class Op>
  Request ireduce_scatter_block(const T* in, std::type_identity_t<T>* out, std::size_t m,
                                const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(
        issue<T>(false, op, CollectiveKind::reduce_scatter_block, in, out, m, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  Request ireduce_scatter_block(const In& in, Out&& out, std::size_t m, const Op& op,
                                OptionsRef options = {}) {
    return RequestAccess::request(
        issue_ranges(false, op, CollectiveKind::reduce_scatter_block, in, out, m, options));
  }
  template <InOutRange InOut, class Op>
  Request ireduce_scatter_block(InOut&& inout, std::size_t m, const Op& op,
                                OptionsRef options = {}) {
    return RequestAccess::request(
        issue_ranges(false, op, CollectiveKind::reduce_scatter_block, inout, inout, m, options));
  }
  template <class T, class Op>
  Request iscan(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op,
                OptionsRef options = {}) {
    return RequestAccess::request(issue<T>(false, op, CollectiveKind::scan, in, out, n, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  Request iscan(const In& in, Out&& out, const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(
        issue_ranges(false, op, CollectiveKind::scan, in, out, std::ranges::size(in), options));
  }
  template <InOutRange InOut, class Op>
  Request iscan(InOut&& inout, const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::scan, inout, inout,
                                               std::ranges::size(inout), options));
  }
  template <class T, class Op>
  Request iexscan(const T* in, std::type_identity_t<T>* out, std::size_t n, const Op& op,
                  OptionsRef options = {}) {
    return RequestAccess::request(issue<T>(false, op, CollectiveKind::exscan, in, out, n, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  Request iexscan(const In& in, Out&& out, const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(
        issue_ranges(false, op, CollectiveKind::exscan, in, out, std::ranges::size(in), options));
  }
  template <InOutRange InOut, class Op>
  Request iexscan(InOut&& inout, const Op& op, OptionsRef options = {}) {
    return RequestAccess::request(issue_ranges(false, op, CollectiveKind::exscan, inout, inout,
                                               std::ranges::size(inout), options));
  }
  // --- persistent: prepare the call; start() runs it forms
  template <class T, class Op>
  PersistentRequest reduce_init(const T* in, std::type_identity_t<T>* out, std::size_t n,
                                const Op& op, int root, OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue<T>(true, op, CollectiveKind::reduce, in, out, n, options, root));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  PersistentRequest reduce_init(const In& in, Out&& out, const Op& op, int root,
                                OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::reduce, in, out,
                                                  std::ranges::size(in), options, root));
  }
  template <InOutRange InOut, class Op>
  PersistentRequest reduce_init(InOut&& inout, const Op& op, int root, OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::reduce, inout, inout,
                                                  std::ranges::size(inout), options, root));
  }
  template <class T, class Op>
  PersistentRequest allreduce_init(const T* in, std::type_identity_t<T>* out, std::size_t n,
                                   const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue<T>(true, op, CollectiveKind::allreduce, in, out, n, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  PersistentRequest allreduce_init(const In& in, Out&& out, const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue_ranges(true, op, CollectiveKind::allreduce, in, out, std::ranges::size(in), options));
  }
  template <InOutRange InOut, class Op>
  PersistentRequest allreduce_init(InOut&& inout, const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::allreduce, inout, inout,
                                                  std::ranges::size(inout), options));
  }
  template <class T, class Op>
  PersistentRequest reduce_scatter_init(const T* in, std::type_identity_t<T>* out,
                                        std::span<const std::size_t> counts, const Op& op,
                                        OptionsRef options = {}) {
    return RequestAccess::persistent(issue<T>(true, op, CollectiveKind::reduce_scatter, in, out,
                                              counts.size(), options, 0, SIZE_MAX, SIZE_MAX,
                                              counts.data()));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  PersistentRequest reduce_scatter_init(const In& in, Out&& out,
                                        std::span<const std::size_t> counts, const Op& op,
                                        OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::reduce_scatter, in, out,
                                                  counts.size(), options, 0, counts.data()));
  }
  template <InOutRange InOut, class Op>
  PersistentRequest reduce_scatter_init(InOut&& inout, std::span<const std::size_t> counts,
                                        const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::reduce_scatter, inout,
                                                  inout, counts.size(), options, 0, counts.data()));
  }
  template <class T, class Op>
  PersistentRequest reduce_scatter_block_init(const T* in, std::type_identity_t<T>* out,
                                              std::size_t m, const Op& op,
                                              OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue<T>(true, op, CollectiveKind::reduce_scatter_block, in, out, m, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  PersistentRequest reduce_scatter_block_init(const In& in, Out&& out, std::size_t m, const Op& op,
                                              OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue_ranges(true, op, CollectiveKind::reduce_scatter_block, in, out, m, options));
  }
  template <InOutRange InOut, class Op>
  PersistentRequest reduce_scatter_block_init(InOut&& inout, std::size_t m, const Op& op,
                                              OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue_ranges(true, op, CollectiveKind::reduce_scatter_block, inout, inout, m, options));
  }
  template <class T, class Op>
  PersistentRequest scan_init(const T* in, std::type_identity_t<T>* out, std::size_t n,
                              const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(issue<T>(true, op, CollectiveKind::scan, in, out, n, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  PersistentRequest scan_init(const In& in, Out&& out, const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue_ranges(true, op, CollectiveKind::scan, in, out, std::ranges::size(in), options));
  }
  template <InOutRange InOut, class Op>
  PersistentRequest scan_init(InOut&& inout, const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::scan, inout, inout,
                                                  std::ranges::size(inout), options));
  }
  template <class T, class Op>
  PersistentRequest exscan_init(const T* in, std::type_identity_t<T>* out, std::size_t n,
                                const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue<T>(true, op, CollectiveKind::exscan, in, out, n, options));
  }
  template <InputRange In, OutputRangeOf<In> Out, class Op>
  PersistentRequest exscan_init(const In& in, Out&& out, const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(
        issue_ranges(true, op, CollectiveKind::exscan, in, out, std::ranges::size(in), options));
  }
  template <InOutRange InOut, class Op>
  PersistentRequest exscan_init(InOut&& inout, const Op& op, OptionsRef options = {}) {
    return RequestAccess::persistent(issue_ranges(true, op, CollectiveKind::exscan, inout, inout,
                                                  std::ranges::size(inout), options));
  }

 private:
  template <class T, class Op>
  RequestHandle issue(bool persistent, const Op& op, CollectiveKind kind, const T* in, T* out,
                      std::size_t count, OptionsRef options, int root = 0,
                      std::size_t in_size = SIZE_MAX, std::size_t out_size = SIZE_MAX,
                      const std::size_t* counts = nullptr) {
    std::unique_ptr<KeptOp> kept;
    ErasedOp erased;
    if constexpr (kStateless<Op>) {
      erased = erase_op<T>(kStatelessOp<Op>);
    } else {
      static_assert(std::is_copy_constructible_v<Op>,
                    "hreduce: a nonblocking or persistent call keeps a copy of its op");
      auto copy = std::make_unique<KeptOpOf<Op>>(op);
      erased = erase_op<T>(copy->op);
      kept = std::move(copy);
    }
    const CallArgs call(kind, in, out, count, counts, in_size, out_size, root, erased,
                        options.get() != nullptr ? *options.get() : kDefaultCollectiveOptions);
    return issue_call(*static_cast<M&>(*this).state_, call, options.get() == nullptr,
                      std::move(kept), persistent);
  }
  template <class Op, class In, class Out>
  RequestHandle issue_ranges(bool persistent, const Op& op, CollectiveKind kind, const In& in,
                             Out& out, std::size_t count, OptionsRef options, int root = 0,
                             const std::size_t* counts = nullptr) {
    return issue<std::ranges::range_value_t<In>>(
        persistent, op, kind, std::ranges::data(in), std::ranges::data(out), count, options, root,
        std::ranges::size(in), std::ranges::size(out), counts);
  }
};

}  // namespace hreduce::detail
