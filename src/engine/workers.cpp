#include "src/engine/workers.hpp"

#include <string>

#include "hreduce/error.hpp"
#include "src/topology/thread_cpus.hpp"

namespace hreduce::detail {

Workers::~Workers() {
  if (threads_.empty()) return;
  stopping_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void Workers::start(std::vector<Member>& members, const Topology& topology, bool bind) {
  errors_.resize(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    Member& m = members[i];
    threads_.emplace_back(
        [this, &m, &topology, bind, i] { loop(m, static_cast<int>(i), topology, bind); });
    name_thread(threads_.back(), "hreduce m" + std::to_string(i));
  }
}

void Workers::loop(Member& member, int index, const Topology& topology, bool bind) {
  if (bind && topology.is_this_system()) bind_current_thread(topology, member.pu());
  std::uint64_t seen = 0;
  for (;;) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_) return;
    try {
      invoke_(context_, member);
    } catch (...) {
      errors_[index] = std::current_exception();
    }
    // acq_rel: the last worker's decrement publishes every worker's errors_
    // entry to run(), which acquires remaining_.
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_all();
  }
}

void Workers::run(std::vector<Member>& members, const Topology& topology, bool bind,
                  void (*invoke)(void*, Member&), void* context) {
  if (running_.exchange(true, std::memory_order_acquire)) {
    throw ArgumentError(
        "Team::run: a run is already in progress on this team (nested or concurrent run)");
  }
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag.store(false, std::memory_order_release); }
  } release{running_};

  if (threads_.empty()) start(members, topology, bind);
  for (auto& e : errors_) e = nullptr;
  invoke_ = invoke;
  context_ = context;
  remaining_.store(static_cast<int>(members.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (int left = remaining_.load(std::memory_order_acquire); left != 0;
       left = remaining_.load(std::memory_order_acquire)) {
    remaining_.wait(left, std::memory_order_acquire);
  }
  for (auto& e : errors_) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace hreduce::detail
