#include "src/model/fluid_simulation.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <utility>

#include "hreduce/error.hpp"

namespace hreduce::detail::model {

const char* level_name(Level level) {
  switch (level) {
    case Level::inside_process: return "inside_process";
    case Level::node_segment: return "node_segment";
    case Level::between_nodes: return "between_nodes";
    case Level::waiting: return "waiting";
  }
  return "?";
}

int FluidSimulation::add_resource(std::string name, double capacity) {
  if (!(capacity > 0)) {
    throw ArgumentError("predict: resource '" + name + "' has capacity " +
                        std::to_string(capacity) + " (must be positive)");
  }
  resources_.push_back({std::move(name), capacity});
  return static_cast<int>(resources_.size()) - 1;
}

int FluidSimulation::add_task(Task task) {
  const int id = static_cast<int>(tasks_.size());
  for (int a : task.after) {
    if (a < 0 || a >= id) {
      throw ArgumentError("predict: task " + std::to_string(id) + " waits for task " +
                          std::to_string(a) + ", which is not an earlier task");
    }
  }
  for (int r : task.resources) {
    if (r < 0 || r >= static_cast<int>(resources_.size())) {
      throw ArgumentError("predict: task " + std::to_string(id) + " crosses resource " +
                          std::to_string(r) + ", which does not exist");
    }
  }
  tasks_.push_back(std::move(task));
  return id;
}

namespace {

struct Flow {
  int task = 0;
  double remaining = 0;
  std::map<int, double> limited_seconds;  // limiter (-1: own rate) -> seconds
};

// A flow's rate now, and what limits it.
std::pair<double, int> rate_of(const Task& task, const std::vector<int>& crossing,
                               const std::vector<double>& capacity) {
  double rate = task.own_rate;
  int limiter = -1;
  for (int r : task.resources) {
    const double share =
        capacity[static_cast<std::size_t>(r)] / crossing[static_cast<std::size_t>(r)];
    if (share < rate) rate = share, limiter = r;
  }
  return {rate, limiter};
}

// What limited a flow for most of its time (-1: its own rate).
int longest_limiter(const Flow& f) {
  auto longest = std::max_element(f.limited_seconds.begin(), f.limited_seconds.end(),
                                  [](auto& a, auto& b) { return a.second < b.second; });
  return longest->first;
}

// Every flow's rate and limiter at this instant: each resource's capacity
// shared equally by the flows crossing it.
std::vector<std::pair<double, int>> rates_now(const std::vector<Task>& tasks,
                                              const std::vector<Flow>& flows,
                                              const std::vector<double>& capacity) {
  std::vector<int> crossing(capacity.size(), 0);
  for (const Flow& f : flows) {
    for (int r : tasks[static_cast<std::size_t>(f.task)].resources) {
      ++crossing[static_cast<std::size_t>(r)];
    }
  }
  std::vector<std::pair<double, int>> rates;
  for (const Flow& f : flows) {
    rates.push_back(rate_of(tasks[static_cast<std::size_t>(f.task)], crossing, capacity));
  }
  return rates;
}

// Time to the next event: the next latency's end (`next_timer` from now) or
// the first flow to finish at its current rate.
double until_next_event(const std::vector<Flow>& flows,
                        const std::vector<std::pair<double, int>>& rates, double next_timer) {
  double step = next_timer;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    step = std::min(step, flows[i].remaining / rates[i].first);
  }
  return std::max(step, 0.0);
}

}  // namespace

// Event by event: flows advance at their current rates until the next flow
// ends or the next latency elapses; then rates are recomputed.
std::vector<TaskTiming> FluidSimulation::run() const {
  const std::size_t n = tasks_.size();
  std::vector<TaskTiming> timing(n);
  std::vector<int> waiting_for(n, 0);
  std::vector<std::vector<int>> dependents(n);
  std::vector<double> capacity;
  for (const Resource& r : resources_) capacity.push_back(r.capacity);
  using Timer = std::pair<double, int>;  // (when the latency ends, task)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers;
  for (std::size_t i = 0; i < n; ++i) {
    waiting_for[i] = static_cast<int>(tasks_[i].after.size());
    for (int a : tasks_[i].after)
      dependents[static_cast<std::size_t>(a)].push_back(static_cast<int>(i));
    if (waiting_for[i] == 0) timers.push({tasks_[i].latency, static_cast<int>(i)});
  }
  std::vector<Flow> flows;
  double now = 0;
  auto finish = [&](int id) {
    timing[static_cast<std::size_t>(id)].end = now;
    for (int d : dependents[static_cast<std::size_t>(id)]) {
      if (--waiting_for[static_cast<std::size_t>(d)] == 0) {
        timing[static_cast<std::size_t>(d)].ready = now;
        timers.push({now + tasks_[static_cast<std::size_t>(d)].latency, d});
      }
    }
  };
  while (!timers.empty() || !flows.empty()) {
    std::vector<std::pair<double, int>> rates = rates_now(tasks_, flows, capacity);
    const double step = until_next_event(
        flows, rates,
        timers.empty() ? std::numeric_limits<double>::infinity() : timers.top().first - now);
    now += step;
    std::vector<Flow> still;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      Flow& f = flows[i];
      f.remaining -= rates[i].first * step;
      f.limited_seconds[rates[i].second] += step;
      const double work = tasks_[static_cast<std::size_t>(f.task)].work;
      if (f.remaining > 1e-9 * work) {
        still.push_back(std::move(f));
        continue;
      }
      timing[static_cast<std::size_t>(f.task)].limiting_resource = longest_limiter(f);
      finish(f.task);
    }
    flows = std::move(still);
    while (!timers.empty() && timers.top().first <= now) {
      const int id = timers.top().second;
      timers.pop();
      if (tasks_[static_cast<std::size_t>(id)].work > 0) {
        flows.push_back({id, tasks_[static_cast<std::size_t>(id)].work, {}});
      } else {
        finish(id);
      }
    }
  }
  return timing;
}

// Backwards from the task that ends last, each time to the task among its
// `after` that ended last (the one it really waited for).
CriticalPath critical_path(const FluidSimulation& simulation,
                           const std::vector<TaskTiming>& timings) {
  CriticalPath path;
  if (timings.empty()) return path;
  int id = static_cast<int>(std::max_element(timings.begin(), timings.end(),
                                             [](auto& a, auto& b) { return a.end < b.end; }) -
                            timings.begin());
  path.seconds = timings[static_cast<std::size_t>(id)].end;
  std::map<std::string, double> by_term;
  while (id >= 0) {
    const Task& task = simulation.task(id);
    const TaskTiming& t = timings[static_cast<std::size_t>(id)];
    const double spent = t.end - t.ready;
    path.level_seconds[static_cast<int>(task.level)] += spent;
    const bool resource_bound = task.work > 0 && t.limiting_resource >= 0;
    by_term[resource_bound ? simulation.resource_name(t.limiting_resource) : task.term] += spent;
    int previous = -1;
    for (int a : task.after) {
      if (previous < 0 || timings[static_cast<std::size_t>(a)].end >
                              timings[static_cast<std::size_t>(previous)].end) {
        previous = a;
      }
    }
    id = previous;
  }
  for (const auto& [term, seconds] : by_term) {
    if (seconds > path.dominant_seconds) path.dominant_term = term, path.dominant_seconds = seconds;
  }
  return path;
}

}  // namespace hreduce::detail::model
