// The persistent worker threads behind Team::run: started on first use, one
// per member, pinned to the member's PU, parked in atomic::wait between runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "hreduce/team.hpp"

namespace hreduce::detail {

class Workers {
 public:
  Workers() = default;
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Runs invoke(context, members[i]) on worker i for every i; rethrows the
  // lowest-ranked member's exception.
  void run(std::vector<Member>& members, const Topology& topology, bool bind,
           void (*invoke)(void*, Member&), void* context);

 private:
  void start(std::vector<Member>& members, const Topology& topology, bool bind);
  void loop(Member& member, int index, const Topology& topology, bool bind);

  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
  void (*invoke_)(void*, Member&) = nullptr;
  void* context_ = nullptr;
  // Bumped (release) to hand out a job; workers acquire it, so invoke_ and
  // context_ written before are visible to them.
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> remaining_{0};
  std::atomic<bool> running_{false};
  bool stopping_ = false;
};

}  // namespace hreduce::detail
