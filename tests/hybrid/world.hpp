// Several "processes" in one test binary: each is a Team whose leaders talk
// over an in-memory channel instead of MPI, so the multi-process logic runs
// under ThreadSanitizer and without mpirun.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "hreduce/team.hpp"
#include "src/hybrid/inter_process_group.hpp"
#include "src/transport/in_memory_channel.hpp"

namespace hreduce::test {

// A named process layout for World: members per process, node per process.
struct Layout {
  const char* name;
  std::vector<int> threads;
  std::vector<int> node_of;
};

class World {
 public:
  // threads[k]: members of process k; node_of[k]: its node (empty: one node).
  World(std::vector<int> threads, std::vector<int> node_of = {}, detail::InterOptions inter = {})
      : fabric_(static_cast<int>(threads.size())), teams_(threads.size()) {
    // Built at once, as processes would: the node level's segment is made
    // collectively by the processes of each node.
    std::vector<std::thread> builders;
    for (int k = 0; k < static_cast<int>(threads.size()); ++k) {
      builders.emplace_back([&, k] {
        detail::ProcessLayout layout{k, threads, node_of};
        auto group =
            std::make_unique<detail::InterProcessGroup>(fabric_.endpoint(k), layout, inter);
        TeamOptions options;
        options.members = threads[k];
        options.topology = Topology::synthetic("pack:1 core:2 pu:2");
        teams_[k].reset(new Team(detail::team_over_processes(options, std::move(group))));
      });
    }
    for (auto& b : builders) b.join();
  }

  int processes() const { return processes_count(); }
  int processes_count() const { return static_cast<int>(teams_.size()); }
  int size() const { return teams_.front()->size(); }
  Team& team(int process) { return *teams_[process]; }

  // fn(process, Team&) on one thread per process at once (collective
  // calls on the team itself, such as Team::allocate).
  template <class Fn>
  void each_process(Fn&& fn) {
    std::vector<std::thread> processes;
    for (int k = 0; k < processes_count(); ++k) {
      processes.emplace_back([&, k] { fn(k, *teams_[k]); });
    }
    for (auto& p : processes) p.join();
  }

  // fn(Member&) on every member of every process at once.
  template <class Fn>
  void run(Fn&& fn) {
    std::vector<std::thread> processes;
    for (auto& team : teams_) processes.emplace_back([&] { team->run(fn); });
    for (auto& p : processes) p.join();
  }

 private:
  detail::InMemoryFabric fabric_;
  std::vector<std::unique_ptr<Team>> teams_;
};

}  // namespace hreduce::test
