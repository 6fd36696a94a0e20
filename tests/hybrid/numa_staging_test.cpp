// The node segment's staging chunks of each process are bound to the NUMA
// node of its member 0 before the first operation (docs/spec.md, "Where
// memory lives"): explain() says where each process asked for them and
// whether the kernel took the binding; a call through the chunks then finds
// their pages there. Team::allocate's memory of each process is bound there
// too, as the kernel reports. Processes are teams on this machine's topology (the
// binding acts only on this machine) over an in-memory channel.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/team.hpp"
#include "src/hybrid/inter_process_group.hpp"
#include "src/transport/in_memory_channel.hpp"
#include "tests/support/mempolicy.hpp"

using namespace hreduce;

TEST_CASE("each process's staging chunks live on its member 0's NUMA node",
          "[hybrid][node][numa]") {
  // Through the staging chunks: two processes' long calls would otherwise
  // take the single copy, which leaves the chunks untouched.
  setenv("HREDUCE_NODE_SINGLE_COPY", "off", 1);
  const std::vector<int> threads{1, 1};
  detail::InMemoryFabric fabric(2);
  std::vector<std::unique_ptr<Team>> teams(2);
  std::vector<std::thread> builders;
  for (int k = 0; k < 2; ++k) {
    builders.emplace_back([&, k] {
      detail::ProcessLayout layout{k, threads, {}};
      auto group = std::make_unique<detail::InterProcessGroup>(fabric.endpoint(k), layout,
                                                               detail::InterOptions{});
      TeamOptions options;
      options.members = 1;
      teams[k] = std::make_unique<Team>(detail::team_over_processes(options, std::move(group)));
    });
  }
  for (auto& b : builders) b.join();
  unsetenv("HREDUCE_NODE_SINGLE_COPY");

  const std::string text = teams[0]->explain(Collective::allreduce, 1 << 20);
  INFO(text);
  for (int k = 0; k < 2; ++k) {
    const Topology& machine = teams[k]->topology();
    const int numa = machine.pus()[teams[k]->placement().pu_of_member[0]].in(Level::numa);
    const std::string asked = "process " + std::to_string(k) + " (pid ";
    const std::size_t at = text.find(asked);
    REQUIRE(at != std::string::npos);
    const std::string request = "(asked for NUMA node " + std::to_string(numa);
    const bool bound = text.find(request + ", bound)", at) != std::string::npos;
    CHECK((bound || text.find(request + ", first touch)", at) != std::string::npos));
    if (!bound) WARN("the kernel refused mbind here: staging goes by first touch");
  }

  std::vector<std::vector<double>> in(2, std::vector<double>(1 << 17, 1.5)), out = in;
  std::vector<std::thread> processes;
  for (int k = 0; k < 2; ++k) {
    processes.emplace_back([&, k] {
      teams[k]->run([&](Member& m) {
        m.allreduce(in[m.rank()].data(), out[m.rank()].data(), 1 << 17, op::sum);
      });
    });
  }
  for (auto& p : processes) p.join();
  CHECK(out[1][(1 << 17) - 1] == 3.0);

  // Team::allocate's memory of each process: on its member 0's node too.
  std::vector<std::span<double>> shared(2);
  std::vector<std::thread> allocators;
  for (int k = 0; k < 2; ++k) {
    allocators.emplace_back([&, k] { shared[k] = teams[k]->allocate<double>(100000); });
  }
  for (auto& a : allocators) a.join();
  for (int k = 0; k < 2; ++k) {
    const Topology& machine = teams[k]->topology();
    const int numa = machine.pus()[teams[k]->placement().pu_of_member[0]].in(Level::numa);
    for (std::size_t at = 0; at < shared[k].size(); at += 512) {
      const auto policy = test::page_policy(shared[k].data() + at);
      if (!policy) {
        WARN("the kernel does not report memory policies here (get_mempolicy failed)");
        break;
      }
      CHECK(policy->mode == MPOL_BIND);
      CHECK(policy->nodes == std::uint64_t{1} << machine.numa_os_index(numa));
    }
  }
  if (teams[0]->topology().count(Level::numa) == 1) {
    const std::string after = teams[1]->explain(Collective::allreduce, 1 << 20);
    INFO(after);
    CHECK(after.find("staging pages: NUMA node 0") != std::string::npos);
  }
}
