// The flat-MPI baseline: the same collectives with one Open MPI rank per
// core over shared memory (MPI_Reduce, MPI_Allreduce,
// MPI_Reduce_scatter_block, MPI_Scan, MPI_Exscan), interleaved in the same
// run with hreduce on a team of as many threads inside rank 0.
//
//   mpirun -np <cores> --bind-to core --mca mpi_yield_when_idle 1
//       bazel-bin/bench/mpi/mpi_flat_bench [--json FILE] [--max-bytes B] ...
//   (one command line)
//
// While rank 0's hreduce team runs, the other ranks wait in a barrier that
// sleeps between polls, so their cores are free for hreduce's threads; while
// MPI runs, hreduce's workers are blocked. Rank 0 takes every timing
// decision and broadcasts it, so all ranks run the same number of calls.
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/error.hpp"
#include "hreduce/team.hpp"
#include "src/cli/byte_size.hpp"
#include "src/compare/record.hpp"
#include "src/compare/runner.hpp"
#include "src/compare/sampling.hpp"
#include "src/compare/text_output.hpp"
#include "src/compare/timing.hpp"

namespace hreduce::bench {
namespace {

namespace cmp = hreduce::detail::compare;

template <class T>
struct MpiType;
template <>
struct MpiType<double> {
  static MPI_Datatype type() { return MPI_DOUBLE; }
  static MPI_Op op() { return MPI_SUM; }
};
template <>
struct MpiType<std::int32_t> {
  static MPI_Datatype type() { return MPI_INT32_T; }
  static MPI_Op op() { return MPI_SUM; }
};
template <>
struct MpiType<cmp::MinLoc> {
  static MPI_Datatype type() { return MPI_DOUBLE_INT; }
  static MPI_Op op() { return MPI_MINLOC; }
};

struct Settings {
  std::size_t max_bytes = 64u << 20;
  std::size_t step = 8;
  double min_seconds = 0.3;
  double settle_seconds = 0.01;
  std::string json;
};

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

// A barrier that naps between polls: waiting ranks leave their cores to
// rank 0's threads. A millisecond, not less: every wake-up preempts the
// hreduce member on that core, and with 50 µs naps hreduce's 8 B calls
// measured 0.2–2.4 µs instead of the 0.2 µs they take without mpirun.
void sleepy_barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec nap{0, 1'000'000};
    nanosleep(&nap, nullptr);
  }
}

double broadcast(double value) {
  MPI_Bcast(&value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return value;
}

// This rank's part of one flat-MPI collective, with the rank's own buffers.
template <class T>
class FlatMpi {
 public:
  FlatMpi(cmp::Collective collective, std::size_t count)
      : collective_(collective), count_(count), rank_(world_rank()), p_(world_size()) {
    in_.resize(count);
    for (std::size_t i = 0; i < count; ++i) in_[i] = cmp::Element<T>::value(rank_, i);
    out_.resize(collective == cmp::Collective::reduce_scatter_block ? count / p_ : count);
  }

  void call() {
    const MPI_Datatype type = MpiType<T>::type();
    const MPI_Op op = MpiType<T>::op();
    const int n = static_cast<int>(count_);
    switch (collective_) {
      case cmp::Collective::reduce:
        MPI_Reduce(in_.data(), out_.data(), n, type, op, 0, MPI_COMM_WORLD);
        break;
      case cmp::Collective::allreduce:
        MPI_Allreduce(in_.data(), out_.data(), n, type, op, MPI_COMM_WORLD);
        break;
      case cmp::Collective::reduce_scatter_block:
        MPI_Reduce_scatter_block(in_.data(), out_.data(), n / p_, type, op, MPI_COMM_WORLD);
        break;
      case cmp::Collective::scan:
        MPI_Scan(in_.data(), out_.data(), n, type, op, MPI_COMM_WORLD);
        break;
      case cmp::Collective::exscan:
        MPI_Exscan(in_.data(), out_.data(), n, type, op, MPI_COMM_WORLD);
        break;
      case cmp::Collective::reduce_scatter: break;  // not compared (kCollectives)
    }
  }

  // MPI's result against the same rank-ordered fold hreduce is checked with.
  bool right_everywhere() {
    std::fill(out_.begin(), out_.end(), cmp::Element<T>::identity());
    call();
    bool right = true;
    const std::size_t block = count_ / p_;
    for (std::size_t i = 0; cmp::has_output(collective_, rank_) && i < out_.size(); ++i) {
      right &= out_[i] == cmp::expected_output<T>(collective_, p_, rank_, i, block);
    }
    int mine = right, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
  }

  // Seconds on rank 0 from a barrier before the first call to one after the last.
  double seconds_for(int calls) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = cmp::Clock::now();
    for (int c = 0; c < calls; ++c) call();
    MPI_Barrier(MPI_COMM_WORLD);
    return broadcast(cmp::seconds_since(start));
  }

 private:
  cmp::Collective collective_;
  std::size_t count_;
  int rank_, p_;
  std::vector<T> in_, out_;
};

// Both sides of one case, taking turns.
template <class T>
class Duel {
 public:
  Duel(Team* team, cmp::Collective collective, std::size_t count, const Settings& settings)
      : flat_(collective, count), settings_(settings) {
    if (team) {
      problem_ = std::make_unique<cmp::Problem<T>>(collective, team->size(), count);
      hreduce_ = cmp::make_hreduce_runner(*team, *problem_);
    }
  }

  bool right() {
    bool ours = true;
    if (problem_) {
      problem_->clear_outputs();
      hreduce_->seconds_for(1);
      ours = problem_->first_wrong_member() < 0;
    }
    sleepy_barrier();
    ours = broadcast(ours ? 1 : 0) != 0;
    return flat_.right_everywhere() && ours;
  }

  double hreduce_seconds(int calls) {
    settle();
    double seconds = 0;
    if (hreduce_) seconds = hreduce_->seconds_for(calls);
    sleepy_barrier();
    return broadcast(seconds);
  }
  double mpi_seconds(int calls) {
    settle();
    return flat_.seconds_for(calls);
  }

  // Per-call summaries: {mpi_flat, hreduce}.
  std::pair<cmp::Summary, cmp::Summary> sample() {
    const int mpi_batch = calibrate([&](int c) { return mpi_seconds(c); });
    const int our_batch = calibrate([&](int c) { return hreduce_seconds(c); });
    std::vector<double> mpi, ours;
    const auto start = cmp::Clock::now();
    for (int round = 0; round < 101; ++round) {
      const bool more = round < 5 || cmp::seconds_since(start) < settings_.min_seconds;
      if (broadcast(more ? 1 : 0) == 0) break;
      if (round % 2 == 0) {
        mpi.push_back(mpi_seconds(mpi_batch) / mpi_batch);
        ours.push_back(hreduce_seconds(our_batch) / our_batch);
      } else {
        ours.push_back(hreduce_seconds(our_batch) / our_batch);
        mpi.push_back(mpi_seconds(mpi_batch) / mpi_batch);
      }
    }
    return {cmp::summarize(mpi), cmp::summarize(ours)};
  }

  double moved_bytes() const { return problem_ ? problem_->moved_bytes() : 0; }

 private:
  void settle() const {
    std::this_thread::sleep_for(std::chrono::duration<double>(settings_.settle_seconds));
  }
  template <class Timed>
  static int calibrate(Timed timed) {
    int calls = 1;
    while (calls < (1 << 20)) {
      const double took = timed(calls);  // the same on every rank
      if (took >= 1e-3) break;
      calls *= took > 0 ? std::clamp(static_cast<int>(1.2e-3 / took) + 1, 2, 16) : 16;
    }
    return calls;
  }

  FlatMpi<T> flat_;
  const Settings& settings_;
  std::unique_ptr<cmp::Problem<T>> problem_;
  std::unique_ptr<cmp::Runner> hreduce_;
};

template <class T>
bool run_case(Team* team, cmp::Collective collective, std::size_t bytes, const Settings& settings,
              std::vector<cmp::Record>& records) {
  const int p = world_size();
  const std::size_t count = cmp::element_count<T>(collective, p, bytes);
  Duel<T> duel(team, collective, count, settings);
  const bool right = duel.right();
  const auto [mpi, ours] = duel.sample();
  if (!team) return right;
  const double moved = duel.moved_bytes();
  for (const auto& [name, s] : {std::pair{"mpi_flat", mpi}, std::pair{"hreduce", ours}}) {
    cmp::Record r;
    r.collective = cmp::name_of(collective);
    r.implementation = name;
    r.type = cmp::Element<T>::type;
    r.op = cmp::Element<T>::op;
    r.members = p;
    r.bytes_per_member = count * sizeof(T);
    cmp::set_timing(r, s, moved);
    records.push_back(r);
  }
  std::printf("%-21s %-10s %8s %11.2f %11.2f %8.2f %8.2f %9.2f  %s\n",
              std::string(cmp::name_of(collective)).c_str(),
              std::string(cmp::Element<T>::type).c_str(),
              cmp::human_bytes(count * sizeof(T)).c_str(), ours.median * 1e6, mpi.median * 1e6,
              moved / ours.median / 1e9, moved / mpi.median / 1e9, mpi.median / ours.median,
              right ? "ok" : "WRONG");
  std::fflush(stdout);
  return right;
}

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      throw Error("mpi_flat_bench: option " + a + " needs a value (or is unknown)");
    const std::string v = argv[++i];
    if (a == "--json") {
      s.json = v;
    } else if (a == "--max-bytes") {
      s.max_bytes = hreduce::cli::byte_count_or_throw("mpi_flat_bench", a, v, 8);
    } else if (a == "--step") {
      s.step = std::max<std::size_t>(2, std::stoull(v));
    } else if (a == "--min-time-ms") {
      s.min_seconds = std::stod(v) / 1000;
    } else if (a == "--settle-us") {
      s.settle_seconds = std::stod(v) / 1e6;
    } else {
      throw Error("mpi_flat_bench: unknown option '" + a +
                  "' (--json FILE, --max-bytes B, --step K, --min-time-ms T, --settle-us U)");
    }
  }
  return s;
}

int run(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  const int p = world_size();
  std::unique_ptr<Team> team;
  if (world_rank() == 0) {
    TeamOptions options;
    options.members = p;
    team = std::make_unique<Team>(options);
    std::printf(
        "mpi_flat_bench: %d MPI ranks vs hreduce with %d threads in rank 0, on %s "
        "(%d core(s), %d PU(s))\n",
        p, p, team->topology().source().c_str(), team->topology().count(Level::core),
        team->topology().pu_count());
    std::printf("%-21s %-10s %8s %11s %11s %8s %8s %9s  check\n", "collective", "type", "bytes",
                "hreduce us", "mpi us", "GB/s", "mpi GB/s", "×mpi_flat");
  }
  std::vector<std::size_t> sizes;
  for (std::size_t b = 8; b <= settings.max_bytes; b *= settings.step) sizes.push_back(b);
  if (sizes.back() != settings.max_bytes) sizes.push_back(settings.max_bytes);
  std::vector<cmp::Record> records;
  bool right = true;
  for (cmp::Collective c : cmp::kCollectives) {
    for (std::size_t bytes : sizes)
      right &= run_case<double>(team.get(), c, bytes, settings, records);
    if (c != cmp::Collective::allreduce) continue;
    for (std::size_t bytes : sizes)
      right &= run_case<std::int32_t>(team.get(), c, bytes, settings, records);
    for (std::size_t bytes : sizes)
      right &= run_case<cmp::MinLoc>(team.get(), c, bytes, settings, records);
  }
  if (team && !settings.json.empty()) cmp::write_json(settings.json, records);
  if (!right && team)
    std::fprintf(stderr, "mpi_flat_bench: some results differ from the sequential oracle\n");
  return right ? 0 : 1;
}

}  // namespace
}  // namespace hreduce::bench

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 1;
  try {
    status = hreduce::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
