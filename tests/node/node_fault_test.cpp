// A process of the node killed (SIGKILL) in the middle of node operations:
// the others must throw an Error naming it, long before their timeout,
// instead of hanging. Real processes here (fork), since a dead thread
// cannot be told from a slow one.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "hreduce/error.hpp"
#include "src/node/node_group.hpp"

using namespace hreduce;
using namespace hreduce::detail;

namespace {

constexpr int kProcesses = 3;
constexpr int kVictim = 1;
constexpr std::size_t kChunk = 4096;

enum Outcome : int { told_of_death = 0, wrong_message = 1, no_error = 2, too_slow = 3 };

// One child: node operations until the victim kills itself in its 50th;
// the others must learn of it through an Error.
[[noreturn]] void child(SharedSegment segment, int rank, std::size_t n) {
  const auto timeout = std::chrono::seconds(60);
  NodeGroup group(std::move(segment), rank, kProcesses, 0, kChunk, timeout, true);
  std::vector<long> in(n, rank + 1), out(n);
  const ErasedOp op = erase_op<long>(op::sum);
  NodeReduction r;
  r.in = in.data();
  r.count = n;
  r.op = &op;
  r.out = out.data();
  r.out_hi = n;
  NodeCallInfo info;
  info.kind = CollectiveKind::allreduce;
  info.count = n;
  const auto started = std::chrono::steady_clock::now();
  try {
    for (int call = 0; call < 1000000; ++call) {
      if (rank == kVictim && call == 50) raise(SIGKILL);
      group.reduce(info, r);
    }
  } catch (const Error& e) {
    const std::string text = e.what();
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(10)) _exit(too_slow);
    const bool named = text.find("process " + std::to_string(kVictim)) != std::string::npos &&
                       text.find("died") != std::string::npos;
    _exit(named ? told_of_death : wrong_message);
  }
  _exit(no_error);
}

}  // namespace

TEST_CASE("a killed process of the node fails the others, naming it", "[node][negative]") {
  // Inputs inline in the announcement, and long ones through the chunks.
  const std::size_t n = GENERATE(std::size_t{4}, std::size_t{10000});
  INFO("n = " << n);
  std::vector<pid_t> children;
  {
    SharedSegment segment = SharedSegment::anonymous(NodeGroup::segment_bytes(kProcesses, kChunk));
    for (int rank = 0; rank < kProcesses; ++rank) {
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) child(std::move(segment), rank, n);
      children.push_back(pid);
    }
  }
  for (int rank = 0; rank < kProcesses; ++rank) {
    int status = 0;
    REQUIRE(waitpid(children[rank], &status, 0) == children[rank]);
    INFO("process " << rank);
    if (rank == kVictim) {
      CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    } else {
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == told_of_death);
    }
  }
}
