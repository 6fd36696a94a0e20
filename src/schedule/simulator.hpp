// A sequential simulator of the generic executor: one thread plays every
// member, messages travel through in-memory channels. It runs the executor
// contract literally (receive by increasing step, nearest first, combine
// with the lower rank on the left, then send), so tests can prove that a
// schedule computes exactly the rank-ordered reduction.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"

namespace hreduce::detail {

// Point-to-point mailboxes keyed by (sender, receiver); a schedule sends at
// most once over each pair.
template <class T>
class InMemoryChannels {
 public:
  void send(int sender, int receiver, std::vector<T> data) {
    auto [it, fresh] = pending_.try_emplace({sender, receiver}, std::move(data));
    if (!fresh) {
      throw ArgumentError("simulator: second message from " + std::to_string(sender) + " to " +
                          std::to_string(receiver) + " before the first was received");
    }
  }

  std::vector<T> receive(int sender, int receiver) {
    auto it = pending_.find({sender, receiver});
    if (it == pending_.end()) {
      throw ArgumentError("simulator: member " + std::to_string(receiver) + " waits for member " +
                          std::to_string(sender) +
                          ", which has not sent (the executor would hang)");
    }
    std::vector<T> data = std::move(it->second);
    pending_.erase(it);
    return data;
  }

  bool empty() const { return pending_.empty(); }

 private:
  std::map<std::pair<int, int>, std::vector<T>> pending_;
};

// Runs `schedule` on one vector per member and returns the root's result.
// `combine(left, right, out, n)` computes out[i] = left[i] ∘ right[i]; out
// is always one of the two inputs' storage.
template <class T, class Combine>
std::vector<T> simulate(const Schedule& schedule, std::vector<std::vector<T>> partial,
                        Combine&& combine) {
  schedule.validate();
  if (static_cast<int>(partial.size()) != schedule.size()) {
    throw ArgumentError("simulator: " + std::to_string(partial.size()) + " inputs for " +
                        std::to_string(schedule.size()) + " members");
  }
  std::vector<std::vector<Transfer>> incoming(schedule.size());
  for (int m = 0; m < schedule.size(); ++m) incoming[m] = schedule.incoming(m);

  InMemoryChannels<T> channels;
  // Global time steps are one legal interleaving of the members' programs:
  // a member's send step exceeds all its receive steps, so what it sends at
  // step t is final.
  for (int step = 1; step <= schedule.steps(); ++step) {
    for (const Transfer& t : schedule.transfers()) {
      if (t.step == step) channels.send(t.sender, t.receiver, partial[t.sender]);
    }
    for (int m = 0; m < schedule.size(); ++m) {
      for (const Transfer& t : incoming[m]) {
        if (t.step != step) continue;
        std::vector<T> received = channels.receive(t.sender, m);
        std::vector<T>& mine = partial[m];
        if (received.size() != mine.size()) {
          throw ArgumentError("simulator: member " + std::to_string(t.sender) + " sent " +
                              std::to_string(received.size()) + " elements, member " +
                              std::to_string(m) + " holds " + std::to_string(mine.size()));
        }
        if (t.sender < m) {
          combine(received.data(), mine.data(), mine.data(), mine.size());
        } else {
          combine(mine.data(), received.data(), mine.data(), mine.size());
        }
      }
    }
  }
  if (!channels.empty()) throw ArgumentError("simulator: messages left undelivered");
  return std::move(partial[schedule.root()]);
}

}  // namespace hreduce::detail
