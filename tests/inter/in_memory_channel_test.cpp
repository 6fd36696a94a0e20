// The in-memory channel itself: FIFO per (sender, receiver, tag), tags kept
// apart, blocking receives, and errors that name the values involved.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/error.hpp"
#include "tests/inter/harness.hpp"

using namespace hreduce;
using detail::Channel;
using detail::InMemoryFabric;

TEST_CASE("in-memory channel: FIFO per tag, tags independent", "[inter][channel]") {
  InMemoryFabric fabric(3);
  Channel& a = fabric.endpoint(0);
  Channel& b = fabric.endpoint(2);
  CHECK(a.size() == 3);
  CHECK(a.rank() == 0);
  CHECK(b.rank() == 2);
  for (int v : {1, 2, 3}) a.send(2, &v, sizeof v, 7);
  const int other = 99;
  a.send(2, &other, sizeof other, 8);
  CHECK(fabric.pending() == 4);
  int got = 0;
  b.recv(0, &got, sizeof got, 8);  // a later tag first: tags do not block each other
  CHECK(got == 99);
  for (int v : {1, 2, 3}) {
    b.recv(0, &got, sizeof got, 7);
    CHECK(got == v);
  }
  CHECK(fabric.pending() == 0);
}

TEST_CASE("in-memory channel: recv blocks until the message exists", "[inter][channel]") {
  InMemoryFabric fabric(2);
  std::vector<double> got(1000);
  std::thread receiver([&] { fabric.endpoint(1).recv(0, got.data(), 8000, 3); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::vector<double> sent(1000, 2.5);
  fabric.endpoint(0).send(1, sent.data(), 8000, 3);
  receiver.join();
  CHECK(got == sent);
}

TEST_CASE("in-memory channel: sendrecv with a partner, and empty messages", "[inter][channel]") {
  InMemoryFabric fabric(2);
  int from0 = -1, from1 = -1;
  std::thread t([&] {
    const int mine = 11;
    fabric.endpoint(1).sendrecv(0, &mine, sizeof mine, 0, &from0, sizeof from0, 1);
    fabric.endpoint(1).recv(0, nullptr, 0, 2);
  });
  const int mine = 10;
  fabric.endpoint(0).sendrecv(1, &mine, sizeof mine, 1, &from1, sizeof from1, 1);
  fabric.endpoint(0).send(1, nullptr, 0, 2);
  t.join();
  CHECK(from0 == 10);
  CHECK(from1 == 11);
  CHECK(fabric.pending() == 0);
}

TEST_CASE("in-memory channel: errors name the sizes, ranks and tags",
          "[inter][channel][negative]") {
  InMemoryFabric fabric(2, std::chrono::milliseconds(50));
  const double x[2] = {1, 2};
  fabric.endpoint(0).send(1, x, sizeof x, 4);
  double y[3];
  CHECK_THROWS_AS(fabric.endpoint(1).recv(0, y, sizeof y, 4), TransportError);
  fabric.endpoint(0).send(1, x, sizeof x, 4);
  CHECK_THROWS_WITH(fabric.endpoint(1).recv(0, y, sizeof y, 4),
                    "InMemoryChannel: rank 1 posted a receive of 24 bytes from rank 0 (tag 4) "
                    "but the message has 16 bytes");
  CHECK_THROWS_AS(fabric.endpoint(1).recv(0, y, sizeof y, 5), UnusableTeamError);
  CHECK_THROWS_WITH(fabric.endpoint(1).recv(0, y, sizeof y, 5),
                    Catch::StartsWith("InMemoryChannel: rank 1 waited 50 ms for a message from "
                                      "rank 0 (tag 5, 24 bytes)"));
  CHECK_THROWS_WITH(fabric.endpoint(0).send(2, x, sizeof x, 4),
                    "InMemoryChannel: rank 0 cannot send to rank 2, outside 0..1");
  CHECK_THROWS_WITH(fabric.endpoint(1).recv(-1, y, sizeof y, 4),
                    "InMemoryChannel: rank 1 cannot recv from rank -1, outside 0..1");
  CHECK_THROWS_WITH(fabric.endpoint(2), "InMemoryFabric: endpoint 2 is outside 0..1");
  CHECK_THROWS_AS(fabric.endpoint(2), ArgumentError);
  CHECK_THROWS_WITH(InMemoryFabric(0), "InMemoryFabric: participant count must be >= 1, got 0");
}
