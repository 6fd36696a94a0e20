#include "src/node/cut_balance.hpp"

#include <algorithm>
#include <bit>

#include "src/node/node_areas.hpp"

namespace hreduce::detail {

namespace {

constexpr std::uint32_t kLowestShare = kCutShareUnits / 16;
constexpr std::uint32_t kHighestShare = kCutShareUnits - kLowestShare;
constexpr std::int64_t kLargestStep = kCutShareUnits / 64;
constexpr std::uint64_t kDeadBand = 64;  // times within 1/64 of each other

}  // namespace

std::uint32_t balanced_share(std::uint32_t share, std::uint64_t busy0, std::uint64_t busy1) {
  share = std::clamp(share, kLowestShare, kHighestShare);
  const std::uint64_t longer = std::max(busy0, busy1), shorter = std::min(busy0, busy1);
  if ((longer - shorter) * kDeadBand <= longer) return share;
  // Each side's time per unit of its share, busy0 / s and busy1 / (U - s),
  // equal at U * busy1 * s / (busy0 * (U - s) + busy1 * s).
  const std::uint64_t s = share, rest = kCutShareUnits - share;
  const auto weighted0 = static_cast<unsigned __int128>(busy0) * rest;
  const auto weighted1 = static_cast<unsigned __int128>(busy1) * s;
  const auto target =
      static_cast<std::int64_t>(weighted1 * kCutShareUnits / (weighted0 + weighted1));
  const std::int64_t step = std::clamp<std::int64_t>((target - static_cast<std::int64_t>(s)) / 2,
                                                     -kLargestStep, kLargestStep);
  return static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(static_cast<std::int64_t>(s) + step, kLowestShare, kHighestShare));
}

std::size_t CutBalance::index(int receiver, bool other_copies, std::size_t bytes) {
  const auto size = std::min<std::size_t>(std::bit_width(bytes), kSizes - 1);
  return static_cast<std::size_t>(receiver * 2 + (other_copies ? 1 : 0)) * kSizes + size;
}

std::size_t CutBalance::cut(int receiver, bool other_copies, std::size_t count,
                            std::size_t elem_size, std::size_t rule_cut) {
  if (rule_cut == 0 || rule_cut >= count) return rule_cut;
  Entry& e = entries_[index(receiver, other_copies, count * elem_size)];
  if (e.share == 0) {
    e.share = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(
        rule_cut * std::uint64_t{kCutShareUnits} / count, kLowestShare, kHighestShare));
    return rule_cut;
  }
  const auto elements =
      static_cast<std::size_t>(static_cast<unsigned __int128>(count) * e.share / kCutShareUnits);
  return std::min(count, whole_lines(elements, elem_size));
}

void CutBalance::observe(int receiver, bool other_copies, std::size_t bytes, std::uint64_t busy0,
                         std::uint64_t busy1) {
  Entry& e = entries_[index(receiver, other_copies, bytes)];
  if (e.share == 0) return;
  // Sums of up to kCutRounds times of at most a second each in nanoseconds
  // (a longer one is cut there): the products above stay within 128 bits.
  constexpr std::uint64_t kLongest = 1'000'000'000;
  e.busy0 += std::min(busy0, kLongest);
  e.busy1 += std::min(busy1, kLongest);
  if (++e.rounds < kCutRounds) return;
  e.share = balanced_share(e.share, e.busy0, e.busy1);
  e.rounds = 0;
  e.busy0 = e.busy1 = 0;
}

}  // namespace hreduce::detail
