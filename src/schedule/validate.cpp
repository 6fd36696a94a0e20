// Schedule::validate: the structural rules of docs/spec.md ("Algorithms") plus,
// for non-commutative ops, rank contiguity of every combine.
#include <algorithm>
#include <set>
#include <tuple>

#include "hreduce/error.hpp"
#include "hreduce/schedule.hpp"

namespace hreduce {
namespace {

[[noreturn]] void reject(const Schedule& s, const std::string& why) {
  throw ArgumentError("Schedule::validate" +
                      (s.name().empty() ? std::string() : " (" + s.name() + ")") + ": " + why);
}

void check_ranges(const Schedule& s) {
  if (s.root() < 0 || s.root() >= s.size()) {
    reject(s,
           "root " + std::to_string(s.root()) + " is outside 0.." + std::to_string(s.size() - 1));
  }
  std::set<std::tuple<int, int, int>> seen;
  for (const Transfer& t : s.transfers()) {
    if (t.sender < 0 || t.sender >= s.size() || t.receiver < 0 || t.receiver >= s.size()) {
      reject(s, "triple " + to_string(t) + " names a member outside 0.." +
                    std::to_string(s.size() - 1));
    }
    if (t.step < 1) reject(s, "triple " + to_string(t) + " has step < 1");
    if (t.sender == t.receiver) reject(s, "triple " + to_string(t) + " sends to itself");
    if (!seen.insert({t.sender, t.step, t.receiver}).second) {
      reject(s, "triple " + to_string(t) + " appears twice");
    }
  }
}

// Returns each member's single successor triple (root: none).
std::vector<const Transfer*> check_successors(const Schedule& s) {
  std::vector<const Transfer*> successor(s.size(), nullptr);
  for (const Transfer& t : s.transfers()) {
    if (t.sender == s.root())
      reject(s, "root " + std::to_string(s.root()) + " sends in triple " + to_string(t));
    if (successor[t.sender] != nullptr) {
      reject(s, "member " + std::to_string(t.sender) + " has two successors: " +
                    to_string(*successor[t.sender]) + " and " + to_string(t));
    }
    successor[t.sender] = &t;
  }
  for (int m = 0; m < s.size(); ++m) {
    if (m != s.root() && successor[m] == nullptr) {
      reject(s, "member " + std::to_string(m) + " has no successor (no triple <" +
                    std::to_string(m) + ",t,q>)");
    }
  }
  return successor;
}

void check_acyclic(const Schedule& s, const std::vector<const Transfer*>& successor) {
  // 0 = unvisited, 1 = on the current path, 2 = known to reach the root.
  std::vector<int> state(s.size(), 0);
  state[s.root()] = 2;
  for (int start = 0; start < s.size(); ++start) {
    std::vector<int> path;
    int m = start;
    while (state[m] == 0) {
      state[m] = 1;
      path.push_back(m);
      m = successor[m]->receiver;
    }
    if (state[m] == 1) {
      std::string cycle;
      for (auto it = std::find(path.begin(), path.end(), m); it != path.end(); ++it) {
        cycle += to_string(*successor[*it]) + ' ';
      }
      reject(s, "successors form a cycle: " + cycle);
    }
    for (int v : path) state[v] = 2;
  }
}

void check_steps_increase(const Schedule& s, const std::vector<const Transfer*>& successor) {
  for (const Transfer& t : s.transfers()) {
    const Transfer* next = successor[t.receiver];
    if (next != nullptr && next->step <= t.step) {
      reject(s,
             "steps do not increase along the path: " + to_string(t) + " then " + to_string(*next));
    }
  }
}

// Replays the executor's combine order on rank ranges: every combine must
// join two adjacent ranges, the lower one on the left.
void check_contiguous(const Schedule& s, const std::vector<const Transfer*>& successor) {
  // Members in order of their send step; the root last. A member's range is
  // final when it sends, because all its receives have smaller steps.
  std::vector<int> order(s.size());
  for (int m = 0; m < s.size(); ++m) order[m] = m;
  auto send_step = [&](int m) { return successor[m] ? successor[m]->step : s.steps() + 1; };
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return send_step(a) < send_step(b); });
  std::vector<std::pair<int, int>> range(s.size());
  for (int m = 0; m < s.size(); ++m) range[m] = {m, m};
  for (int m : order) {
    for (const Transfer& t : s.incoming(m)) {
      auto [lo, hi] = range[m];
      auto [from_lo, from_hi] = range[t.sender];
      const bool left = t.sender < m;
      if (left ? from_hi + 1 != lo : from_lo != hi + 1) {
        reject(s, "not rank-contiguous for a non-commutative op: triple " + to_string(t) +
                      " brings ranks " + std::to_string(from_lo) + ".." + std::to_string(from_hi) +
                      " to member " + std::to_string(m) + " holding ranks " + std::to_string(lo) +
                      ".." + std::to_string(hi));
      }
      range[m] = left ? std::make_pair(from_lo, hi) : std::make_pair(lo, from_hi);
    }
  }
}

}  // namespace

void Schedule::validate(bool commutative) const {
  check_ranges(*this);
  const std::vector<const Transfer*> successor = check_successors(*this);
  check_acyclic(*this, successor);
  check_steps_increase(*this, successor);
  if (!commutative) check_contiguous(*this, successor);
}

}  // namespace hreduce
