// The discrete-event core of the model: tasks that wait for other tasks,
// then pay a fixed latency, then push an amount of work (bytes, or line
// accesses) through shared resources. Resources are shared equally among
// the flows crossing them at each instant (processor sharing), and every
// flow also has a rate of its own; a flow runs at the smallest of its own
// rate and its share of each resource it crosses. Rates change only when a
// flow starts or ends, so time advances from event to event:
//
//      t0         t1            t2
//   A  ████████████░░░░░░░░░░░░░│          two flows on one NUMA node:
//   B  ████████████████████████████████│   each gets half until A ends,
//                                          then B gets the whole node
//
// This is what makes contention visible: sixteen members folding from one
// NUMA node each get a sixteenth of its bandwidth (or their own one-thread
// rate, whichever is lower); eight processes' single copies queue at one
// process; a cache line that every member polls serves one access at a
// time.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace hreduce::detail::model {

// The levels of a call, as `hreduce bench --breakdown` names them.
enum class Level { inside_process, node_segment, between_nodes, waiting };
inline constexpr int kLevelCount = 4;
const char* level_name(Level level);

struct Task {
  std::vector<int> after;  // tasks that must end first
  double latency = 0;      // seconds after the last of `after`, before the flow
  double work = 0;         // units through `resources` (0: latency alone)
  double own_rate = std::numeric_limits<double>::infinity();  // units per second
  std::vector<int> resources;
  Level level = Level::inside_process;
  std::string term;  // what the task's time is spent on, for "dominated by"
};

struct TaskTiming {
  double ready = 0;  // when the last of `after` ended
  double end = 0;
  // Of the flow's time, the resource that limited it longest (-1: its own rate).
  int limiting_resource = -1;
};

class FluidSimulation {
 public:
  // `capacity`: units per second shared by the flows crossing it.
  int add_resource(std::string name, double capacity);
  // Tasks may only wait for tasks added before them.
  int add_task(Task task);

  // Runs every task; returns each one's timing (indexed like add_task).
  std::vector<TaskTiming> run() const;

  const Task& task(int id) const { return tasks_[static_cast<std::size_t>(id)]; }
  const std::string& resource_name(int id) const {
    return resources_[static_cast<std::size_t>(id)].name;
  }
  int task_count() const { return static_cast<int>(tasks_.size()); }

 private:
  struct Resource {
    std::string name;
    double capacity = 0;
  };
  std::vector<Resource> resources_;
  std::vector<Task> tasks_;
};

// Where the time of the longest chain of tasks went: per level, and the
// term (a task's own term, or the resource that limited its flow) that took
// most of it.
struct CriticalPath {
  double seconds = 0;
  double level_seconds[kLevelCount] = {};
  std::string dominant_term;
  double dominant_seconds = 0;
};
CriticalPath critical_path(const FluidSimulation& simulation,
                           const std::vector<TaskTiming>& timings);

}  // namespace hreduce::detail::model
