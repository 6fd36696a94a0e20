#include "src/model/machine_prices.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "hreduce/error.hpp"
#include "src/inter/inter.hpp"  // CostModel: the runtime's own α–β defaults

namespace hreduce::detail::model {
namespace {

// Where the description has no round trip at all (a description written by
// hand without core_to_core): a typical same-package line transfer.
constexpr double kUnmeasuredRoundTripSeconds = 200e-9;

double vector_rate(Stream kind, double counted) {
  // docs/machine.md counts read n, copy 2n, fold 3n bytes per n of vector.
  switch (kind) {
    case Stream::read: return counted;
    case Stream::copy: return counted / 2;
    case Stream::fold: return counted / 3;
  }
  return counted;
}

const probe::NumaMatrix& pick(const probe::MemoryKernels& kernels, Stream kind) {
  switch (kind) {
    case Stream::read: return kernels.read;
    case Stream::copy: return kernels.copy;
    case Stream::fold: return kernels.fold;
  }
  return kernels.read;
}

// Linear between the two points around x (in log x for working sets:
// cache levels are far apart in size, close in log size).
template <class Point, class X, class Y>
double interpolate(const std::vector<Point>& points, double x, X x_of, Y y_of, bool log_x) {
  auto at = [&](const Point& p) {
    const double v = static_cast<double>(x_of(p));
    return log_x ? std::log(v) : v;
  };
  const double t = log_x ? std::log(std::max(x, 1.0)) : x;
  if (t <= at(points.front())) return y_of(points.front());
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (t <= at(points[i])) {
      const double f = (t - at(points[i - 1])) / (at(points[i]) - at(points[i - 1]));
      return y_of(points[i - 1]) + f * (y_of(points[i]) - y_of(points[i - 1]));
    }
  }
  return y_of(points.back());
}

// Seconds for `bytes` on a {bytes, seconds} curve: linear between its
// points, and past the last one its last step's cost per byte goes on
// (messages and copies through memory grow with the size).
double along(const std::vector<probe::DataTransfer>& curve, double bytes) {
  const probe::DataTransfer& last = curve.back();
  if (bytes > static_cast<double>(last.bytes) && curve.size() >= 2) {
    const probe::DataTransfer& before = curve[curve.size() - 2];
    const double per_byte =
        (last.seconds - before.seconds) / static_cast<double>(last.bytes - before.bytes);
    return last.seconds + (bytes - static_cast<double>(last.bytes)) * std::max(0.0, per_byte);
  }
  return interpolate(
      curve, bytes, [](const probe::DataTransfer& d) { return d.bytes; },
      [](const probe::DataTransfer& d) { return d.seconds; }, false);
}

}  // namespace

MachinePrices::MachinePrices(probe::MachineDescription machine) : machine_(std::move(machine)) {
  if (machine_.topology.pus.empty()) {
    throw ArgumentError("predict: the machine description has no PUs (topology.pus is empty)");
  }
}

int MachinePrices::numa_nodes() const { return std::max(1, machine_.topology.numa_nodes); }

int MachinePrices::numa_of_pu(int pu) const {
  const auto& pus = machine_.topology.pus;
  const int numa = pus.at(static_cast<std::size_t>(pu) % pus.size()).numa;
  return numa < 0 ? 0 : numa;
}

probe::Relation MachinePrices::relation(int pu_a, int pu_b) const {
  const auto& pus = machine_.topology.pus;
  const probe::PuPlace& a = pus.at(static_cast<std::size_t>(pu_a) % pus.size());
  const probe::PuPlace& b = pus.at(static_cast<std::size_t>(pu_b) % pus.size());
  auto same = [](int x, int y) { return x >= 0 && x == y; };
  if (same(a.core, b.core)) return probe::Relation::same_core;
  if (same(a.l2, b.l2)) return probe::Relation::same_l2;
  if (same(a.l3, b.l3)) return probe::Relation::same_l3;
  if (same(a.numa, b.numa) || (a.numa < 0 && b.numa < 0)) return probe::Relation::same_numa;
  if (same(a.package, b.package) || (a.package < 0 && b.package < 0)) {
    return probe::Relation::same_package;
  }
  return probe::Relation::across_packages;
}

// The relation's own median; else the nearest relation measured farther
// out (a pessimistic stand-in), else the nearest closer one.
double MachinePrices::one_way_seconds(probe::Relation relation) const {
  const auto& measured = machine_.core_to_core.by_relation;
  const int wanted = static_cast<int>(relation);
  double best = -1;
  int best_distance = 1 << 20;
  for (const probe::RelationSummary& r : measured) {
    const int d = static_cast<int>(r.relation) - wanted;
    const int distance = d >= 0 ? 2 * d : -2 * d + 1;  // farther out first
    if (distance < best_distance) best = r.median_round_trip_seconds, best_distance = distance;
  }
  return (best > 0 ? best : kUnmeasuredRoundTripSeconds) / 2;
}

double MachinePrices::matrix_rate(const probe::NumaMatrix& matrix, int from, int to) const {
  if (matrix.empty()) return 0;
  const auto& row = matrix[static_cast<std::size_t>(from) % matrix.size()];
  if (row.empty()) return 0;
  return row[static_cast<std::size_t>(to) % row.size()];
}

double MachinePrices::one_thread_rate(Stream kind, int from, int to) const {
  const double counted = matrix_rate(pick(machine_.memory.one_thread, kind), from, to);
  return counted > 0 ? vector_rate(kind, counted) : cached_copy_rate() / 8;
}

double MachinePrices::node_rate(Stream kind, int from, int to) const {
  const double counted = matrix_rate(pick(machine_.memory.node_threads, kind), from, to);
  return counted > 0 ? vector_rate(kind, counted) : one_thread_rate(kind, from, to);
}

double MachinePrices::fold_rate(const std::string& op_class, const std::string& type) const {
  double fallback = 0;
  for (const probe::FoldSpeed& f : machine_.fold) {
    if (f.op_class == op_class && f.type == type) return f.bytes_per_second / 3;
    if (f.op_class == "sum" && f.type == "double") fallback = f.bytes_per_second / 3;
  }
  return fallback > 0 ? fallback : 10e9;
}

double MachinePrices::cached_copy_rate() const { return fold_rate("sum", "double"); }

double MachinePrices::cached_rate(Stream kind, double working_set) const {
  const std::vector<probe::SizedRate>& curve = machine_.memory.one_thread_by_size;
  if (curve.empty() || kind == Stream::read ||
      working_set > static_cast<double>(curve.back().working_set_bytes)) {
    return 0;
  }
  const double counted = interpolate(
      curve, working_set, [](const probe::SizedRate& r) { return r.working_set_bytes; },
      [&](const probe::SizedRate& r) { return kind == Stream::copy ? r.copy : r.fold; }, true);
  return vector_rate(kind, counted);
}

double MachinePrices::cached_rate_within_curve(Stream kind, double working_set) const {
  const std::vector<probe::SizedRate>& curve = machine_.memory.one_thread_by_size;
  if (curve.empty()) return 0;
  return cached_rate(kind,
                     std::min(working_set, static_cast<double>(curve.back().working_set_bytes)));
}

std::uint64_t MachinePrices::last_level_cache_bytes() const {
  const probe::MachineTopology& t = machine_.topology;
  const std::uint64_t one = t.l3_bytes > 0 ? t.l3_bytes : t.l2_bytes;
  return one * static_cast<std::uint64_t>(std::max(1, t.l3_caches));
}

double MachinePrices::single_copy_seconds(std::size_t bytes) const {
  const probe::CrossProcess& c = machine_.cross_process;
  if (!c.vm_readv_fixed_seconds || !c.vm_readv_seconds_per_kib) {
    return 2e-6 + static_cast<double>(bytes) / one_thread_rate(Stream::copy, 0, 0);
  }
  return *c.vm_readv_fixed_seconds +
         *c.vm_readv_seconds_per_kib * static_cast<double>(bytes) / 1024;
}

bool MachinePrices::single_copy_available() const {
  return machine_.cross_process.vm_readv_unavailable.empty();
}

double MachinePrices::futex_wake_seconds() const {
  const double median = machine_.cross_process.futex_wake_median_seconds;
  return median > 0 ? median : 5e-6;
}

// Without MPI figures (a probe run outside mpirun): a shared-memory message
// costs a futex-free handoff of two line transfers and a copy through a
// bounce buffer; between nodes the runtime's own α–β defaults.
double MachinePrices::mpi_intra_latency() const {
  if (machine_.mpi && machine_.mpi->intra_node) return machine_.mpi->intra_node->latency_seconds;
  return 4 * one_way_seconds(probe::Relation::same_package);
}
double MachinePrices::mpi_intra_rate() const {
  if (machine_.mpi && machine_.mpi->intra_node) return machine_.mpi->intra_node->bytes_per_second;
  return one_thread_rate(Stream::copy, 0, 0) / 2;
}
double MachinePrices::mpi_inter_latency() const {
  if (machine_.mpi && machine_.mpi->inter_node) return machine_.mpi->inter_node->latency_seconds;
  return CostModel{}.alpha_seconds;
}
double MachinePrices::mpi_inter_rate() const {
  if (machine_.mpi && machine_.mpi->inter_node) return machine_.mpi->inter_node->bytes_per_second;
  return 1 / CostModel{}.beta_seconds_per_byte;
}

double MachinePrices::data_from_another_core_seconds(double bytes) const {
  std::vector<probe::DataTransfer> curve = machine_.core_to_core.data_by_size;
  if (curve.empty() || bytes <= 0) return 0;
  curve.insert(curve.begin(), probe::DataTransfer{0, 0});
  return along(curve, bytes);
}

const probe::MpiLink* MachinePrices::mpi_link(bool between_nodes) const {
  if (!machine_.mpi) return nullptr;
  const std::optional<probe::MpiLink>& link =
      between_nodes ? machine_.mpi->inter_node : machine_.mpi->intra_node;
  return link ? &*link : nullptr;
}

double MachinePrices::exchange_seconds(bool between_nodes) const {
  const probe::MpiLink* link = mpi_link(between_nodes);
  return link ? link->exchange_seconds : 0;
}

double MachinePrices::exchange_by_size_seconds(double bytes, bool between_nodes) const {
  const probe::MpiLink* link = mpi_link(between_nodes);
  if (link == nullptr || link->exchange_by_size.empty()) return 0;
  return along(link->exchange_by_size, bytes);
}

double MachinePrices::message_seconds(double bytes, bool between_nodes) const {
  const probe::MpiLink* link = mpi_link(between_nodes);
  const double rate = between_nodes ? mpi_inter_rate() : mpi_intra_rate();
  if (link == nullptr || link->by_size.empty()) {
    return (between_nodes ? mpi_inter_latency() : mpi_intra_latency()) + bytes / rate;
  }
  const std::vector<probe::MessageTime>& curve = link->by_size;
  const double last = static_cast<double>(curve.back().bytes);
  if (bytes > last && curve.size() >= 2) {
    // The last step of the curve goes on: its per-byte cost is that of
    // messages through memory, which the link's bandwidth (measured on one
    // size, often in cache) is not.
    const probe::MessageTime& a = curve[curve.size() - 2];
    const double per_byte =
        (curve.back().one_way_seconds - a.one_way_seconds) / (last - static_cast<double>(a.bytes));
    return curve.back().one_way_seconds + (bytes - last) * (per_byte > 0 ? per_byte : 1 / rate);
  }
  if (bytes > last) return curve.back().one_way_seconds + (bytes - last) / rate;
  return interpolate(
      curve, bytes, [](const probe::MessageTime& t) { return t.bytes; },
      [](const probe::MessageTime& t) { return t.one_way_seconds; }, false);
}

}  // namespace hreduce::detail::model
