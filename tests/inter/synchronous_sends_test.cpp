// Implementation: no algorithm relies on buffered sends. Over a channel whose
// sends complete only when the receiver takes the bytes (as MPI_Send may do
// for large messages), every algorithm still finishes with correct results;
// a dependence on buffering shows up as a detected deadlock, not a hang.
#include <vector>

#include "hreduce/error.hpp"
#include "tests/inter/every_algorithm.hpp"
#include "tests/inter/harness.hpp"
#include "tests/inter/rendezvous_channel.hpp"

using namespace hreduce;
using namespace hreduce::test;

TEST_CASE("every algorithm works with synchronous sends", "[inter][synchronous]") {
  const int P = GENERATE(from_range(participant_counts()));
  const std::size_t n = GENERATE(as<std::size_t>{}, 0, 7, 1000);
  INFO("P = " << P << ", n = " << n);
  RendezvousFabric fabric(P);
  check_every_algorithm(fabric, n, 1, [](int, int) {});
}

TEST_CASE("the synchronous channel reports a send that needs buffering",
          "[inter][synchronous][negative]") {
  // Both participants send first, then receive: fine with buffering, a
  // deadlock with synchronous sends.
  RendezvousFabric fabric(2, std::chrono::milliseconds(100));
  CHECK_THROWS_WITH(run_participants(fabric,
                                     [](detail::Channel& channel, int r) {
                                       int x = r, y = -1;
                                       channel.send(1 - r, &x, sizeof x, 0);
                                       channel.recv(1 - r, &y, sizeof y, 0);
                                     }),
                    Catch::Contains("timed out (deadlock with synchronous sends?)"));
}
