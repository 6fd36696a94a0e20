// Small pieces every runner shares: the clock and pinning a baseline's
// thread where the team's member of the same index sits.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <chrono>

#include "hreduce/team.hpp"
#include "hreduce/topology.hpp"

namespace hreduce::detail::compare {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Baseline threads sit where hreduce's members sit, so placement is not
// what the comparison measures. Off this machine (synthetic topologies)
// there is nothing to pin to.
inline void pin_like_member(const Team& team, int index) {
  if (team.topology().is_this_system() && index < team.placement().members()) {
    bind_current_thread(team.topology(), team.placement().pu_of_member[index]);
  }
}

// The baselines' first thread is the caller's own thread (OpenMP's master,
// TBB's external thread); pinning it must not outlive the measurement, or
// the rest of the program — and oneTBB's count of usable cores — would see
// one core only.
class KeepCallerAffinity {
 public:
  KeepCallerAffinity() { ok_ = pthread_getaffinity_np(pthread_self(), sizeof set_, &set_) == 0; }
  ~KeepCallerAffinity() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof set_, &set_);
  }
  KeepCallerAffinity(const KeepCallerAffinity&) = delete;
  KeepCallerAffinity& operator=(const KeepCallerAffinity&) = delete;

 private:
  cpu_set_t set_{};
  bool ok_ = false;
};

}  // namespace hreduce::detail::compare
