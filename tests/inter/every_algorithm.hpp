// Every inter-process algorithm called back to back on one fabric, with no
// synchronisation between the calls, checked against the oracles. Used over
// the in-memory channel (tags must keep the algorithms apart while fast
// participants run ahead), over the synchronous-send channel (no algorithm
// may rely on buffered sends) and for counting heap allocations (buffers are
// sized before the first round, so later rounds allocate only if the
// algorithms do).
#pragma once

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "hreduce/schedule.hpp"
#include "tests/inter/harness.hpp"

namespace hreduce::test {

// Runs `rounds` rounds of the sequence on every participant of `fabric`.
// Each participant calls between_rounds(rank, round) before round 0, 1, …
// and once more after the last (round == rounds).
template <class Fabric, class Hook>
void check_every_algorithm(Fabric& fabric, std::size_t n, int rounds, Hook between_rounds) {
  namespace inter = detail::inter;
  using Bytes = std::vector<unsigned char>;
  const int P = fabric.size();
  const Data<AffineCompose> affine(P, n);
  const Data<Int32Sum> ints(P, n);
  const Data<DoubleSum> doubles(P, n);
  const detail::ErasedOp affine_op = AffineCompose::erased();
  const detail::ErasedOp int_op = Int32Sum::erased();
  const detail::ErasedOp double_op = DoubleSum::erased();
  // reduce_scatter: uneven blocks (some empty) of vectors of their own.
  const std::vector<std::size_t> counts = block_counts(P, n, true);
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  for (std::size_t c : counts) {
    offsets.push_back(total);
    total += c;
  }
  const Data<AffineCompose> affine_whole(P, total);
  const Data<Int32Sum> ints_whole(P, total);
  const Schedule knomial = schedules::knomial(P, 3);
  const int root = P - 1;
  const int broadcast_root = P / 2;

  constexpr int kSteps = 13;
  const std::size_t longest = std::max(n, total) * sizeof(Affine);
  // got[round][step][participant]: the bytes of one result (empty where
  // nothing is checked), with room reserved up front.
  std::vector<std::vector<std::vector<Bytes>>> got(
      static_cast<std::size_t>(rounds),
      std::vector<std::vector<Bytes>>(kSteps, std::vector<Bytes>(static_cast<std::size_t>(P))));
  for (auto& round : got) {
    for (auto& step : round) {
      for (Bytes& b : step) b.reserve(longest);
    }
  }
  auto keep = [](Bytes& to, const auto& v, std::size_t count) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    to.assign(p, p + count * sizeof(v[0]));
  };

  run_participants(fabric, [&](detail::Channel& channel, int r) {
    detail::Workspace workspace;
    std::minstd_rand jitter(static_cast<unsigned>(r) + 1);
    auto shake = [&] {
      if (jitter() % 3 == 0) std::this_thread::yield();
    };
    std::vector<Affine> a;
    std::vector<std::int32_t> b;
    std::vector<double> d;
    a.reserve(std::max(n, total));
    b.reserve(std::max(n, total));
    d.reserve(n);
    for (int round = 0; round < rounds; ++round) {
      between_rounds(r, round);
      auto& out = got[round];
      a = affine.x[r];
      inter::binomial_reduce(channel, a.data(), n, affine_op, root, workspace);
      if (r == root) keep(out[0][r], a, n);
      shake();
      b = ints.x[r];
      inter::binomial_broadcast(channel, b.data(), n * sizeof(std::int32_t), broadcast_root);
      keep(out[1][r], b, n);
      a = affine.x[r];
      inter::recursive_doubling_allreduce(channel, a.data(), n, affine_op, workspace);
      keep(out[2][r], a, n);
      shake();
      b = ints.x[r];
      inter::ring_allreduce(channel, b.data(), n, int_op, workspace);
      keep(out[3][r], b, n);
      a = affine.x[r];
      inter::rabenseifner_allreduce(channel, a.data(), n, affine_op, workspace);
      keep(out[4][r], a, n);
      a = affine.x[r];
      inter::hypercube_scan(channel, a.data(), a.data(), n, affine_op, false, workspace);
      keep(out[5][r], a, n);
      shake();
      b = ints.x[r];
      inter::hypercube_scan(channel, b.data(), b.data(), n, int_op, true, workspace);
      if (r > 0) keep(out[6][r], b, n);
      b = ints_whole.x[r];
      inter::pairwise_reduce_scatter(channel, b.data(), b.data(), counts.data(), int_op, workspace);
      keep(out[7][r], b, counts[r]);
      a = affine_whole.x[r];
      inter::reduce_then_scatter(channel, a.data(), a.data(), counts.data(), affine_op, workspace);
      keep(out[8][r], a, counts[r]);
      shake();
      a = affine.x[r];
      inter::execute_schedule(channel, knomial, a.data(), n, affine_op, workspace,
                              detail::tags::first_free);
      if (r == 0) keep(out[9][r], a, n);
      // The same algorithm twice in a row, on other data.
      d = doubles.x[r];
      inter::recursive_doubling_allreduce(channel, d.data(), n, double_op, workspace);
      keep(out[10][r], d, n);
      a = affine.x[r];
      inter::recursive_doubling_allreduce(channel, a.data(), n, affine_op, workspace);
      keep(out[11][r], a, n);
      b = ints.x[r];
      inter::binomial_reduce(channel, b.data(), n, int_op, 0, workspace);
      if (r == 0) keep(out[12][r], b, n);
    }
    between_rounds(r, rounds);
  });

  std::vector<std::vector<Bytes>> expected(kSteps, std::vector<Bytes>(static_cast<std::size_t>(P)));
  auto block = [&](Bytes& to, const auto& whole, int r) {
    const auto* p = reinterpret_cast<const unsigned char*>(whole.data() + offsets[r]);
    to.assign(p, p + counts[r] * sizeof(whole[0]));
  };
  for (int r = 0; r < P; ++r) {
    if (r == root) keep(expected[0][r], affine.total(), n);
    keep(expected[1][r], ints.x[broadcast_root], n);
    keep(expected[2][r], affine.total(), n);
    keep(expected[3][r], ints.total(), n);
    keep(expected[4][r], affine.total(), n);
    keep(expected[5][r], affine.prefix[r], n);
    if (r > 0) keep(expected[6][r], ints.prefix[r - 1], n);
    block(expected[7][r], ints_whole.total(), r);
    block(expected[8][r], affine_whole.total(), r);
    if (r == 0) keep(expected[9][r], affine.total(), n);
    keep(expected[10][r], doubles.total(), n);
    keep(expected[11][r], affine.total(), n);
    if (r == 0) keep(expected[12][r], ints.total(), n);
  }
  for (int round = 0; round < rounds; ++round) {
    for (int step = 0; step < kSteps; ++step) {
      for (int r = 0; r < P; ++r) {
        INFO("round " << round << ", step " << step << ", participant " << r);
        REQUIRE(got[round][step][r] == expected[step][r]);
      }
    }
  }
}

}  // namespace hreduce::test
