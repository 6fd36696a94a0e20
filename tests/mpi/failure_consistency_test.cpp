// Run by failure_consistency_test.sh under mpirun: a failed call fails on
// every process, with the same class, and Team::usable() says so
// afterwards (docs/errors.md, docs/spec.md "Timeouts and failures").
//
//   failure_consistency_test late SOURCE VICTIM ROUNDS THREADS
//     Process VICTIM arrives at an allreduce twice the timeout late, ROUNDS
//     times. Every member of every process, the late one included, must
//     throw UnusableTeamError in that very call, and usable() is then false
//     on every process. Team::resynchronize() then brings a team of one
//     node back (an allreduce checked against the sum of the ranks follows)
//     and refuses one of several nodes with UnusableTeamError (a new team
//     is built for the next round). SOURCE says where the timeout comes
//     from: "options" (TeamOptions::timeout), "env" (HREDUCE_TIMEOUT_MS,
//     set by the script), "default" (MpiTeamOptions::default_timeout).
//   failure_consistency_test killed SOURCE VICTIM THREADS
//     Process VICTIM is killed before an allreduce (a team of several
//     nodes): every other process throws UnusableTeamError in it, usable()
//     is false, resynchronize() refuses, and the team is destroyed.
//   failure_consistency_test levels THREADS
//     Member 0 of every process asks for reproducibility exact, the others
//     for run_to_run, in a double allreduce of 100 elements: every member
//     throws ArgumentError naming the reproducibility level and each value.
//
// Each process prints one line per finding, "FAIL: ..." for a broken
// promise, and "PASS" at the end when it found none; the exit status is
// the worst over all ranks.
#include <mpi.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hreduce/mpi.hpp"
#include "tests/support/error_class.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int world_rank = 0;
int failures = 0;

void fail(const std::string& what) {
  ++failures;
  std::printf("FAIL: process %d: %s\n", world_rank, what.c_str());
  std::fflush(stdout);
}

// What one member's call ended in.
struct Outcome {
  std::string tag;  // class_tag of the exception, "" when the call returned
  std::string what;
  double seconds = 0;
  double result = 0;
};

struct Settings {
  std::string source;
  int victim = 0;
  int rounds = 1;
  int threads = 1;
  std::chrono::milliseconds timeout{400};
};

std::unique_ptr<hreduce::Team> build_team(const Settings& s) {
  hreduce::TeamOptions options;
  options.bind = false;  // more processes than cores
  hreduce::MpiTeamOptions mpi;
  if (s.source == "options") options.timeout = s.timeout;
  if (s.source == "default") mpi.default_timeout = s.timeout;
  // "env": HREDUCE_TIMEOUT_MS overrides TeamOptions::timeout and the
  // default, so a value that would otherwise hang the test is given here.
  if (s.source == "env") options.timeout = std::chrono::minutes(10);
  return std::make_unique<hreduce::Team>(
      hreduce::make_mpi_team(MPI_COMM_WORLD, s.threads, options, mpi));
}

// Every member calls one allreduce of its rank + 1; the victim's members
// come `late` later. Every process runs `threads` members, so this
// process's first team rank is world_rank * threads.
std::vector<Outcome> allreduce_everywhere(hreduce::Team& team, const Settings& s, bool late_here,
                                          std::chrono::milliseconds late) {
  std::vector<Outcome> outcomes(static_cast<std::size_t>(team.local_size()));
  team.run([&](hreduce::Member& m) {
    if (late_here) std::this_thread::sleep_for(late);
    const double in = m.rank() + 1;
    double out = 0;
    Outcome outcome;
    const auto start = Clock::now();
    try {
      m.allreduce(&in, &out, 1, hreduce::op::sum);
      outcome.result = out;
    } catch (const hreduce::Error& e) {
      outcome.tag = hreduce::test::class_tag(e);
      outcome.what = e.what();
    }
    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    outcomes[static_cast<std::size_t>(m.rank() - world_rank * s.threads)] = outcome;
  });
  return outcomes;
}

// The documented outcome of an allreduce that succeeded: 1 + 2 + ... + p.
void expect_sum(hreduce::Team& team, const Settings& s, const char* when) {
  const double p = team.size();
  for (const Outcome& o : allreduce_everywhere(team, s, false, 0ms)) {
    if (!o.tag.empty() || o.result != p * (p + 1) / 2) {
      fail(std::string(when) + ": allreduce gave " + std::to_string(o.result) + ", expected " +
           std::to_string(p * (p + 1) / 2) + " " + o.tag + o.what);
    }
  }
}

// The call that someone came late to: UnusableTeamError on every member
// here (TransportError is one), within a few timeouts where this process
// was on time.
void expect_failed_call(const std::vector<Outcome>& outcomes, bool late_here, int round) {
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    const std::string who =
        "round " + std::to_string(round) + ", member " + std::to_string(i) + " of this process";
    if (o.tag != "[UnusableTeamError] " && o.tag != "[TransportError] ") {
      fail(who + (late_here ? " (late)" : "") + ": expected UnusableTeamError, got " +
           (o.tag.empty() ? "a result, " + std::to_string(o.result) : o.tag + o.what));
    } else if (!late_here && o.seconds > 10) {
      fail(who + ": failed only after " + std::to_string(o.seconds) + " s");
    }
  }
}

// After the failed call: usable() is false; resynchronize() brings a team
// of one node back and refuses a team of several (docs/errors.md).
// Returns whether the team can go on.
bool expect_after_failure(hreduce::Team& team, const Settings& s, bool one_node, int round) {
  const std::string when = "round " + std::to_string(round);
  if (team.usable()) fail(when + ": usable() is true after the failed call");
  // Every member of every process has caught its error.
  PMPI_Barrier(MPI_COMM_WORLD);
  try {
    team.resynchronize();
    if (!one_node) fail(when + ": resynchronize() accepted a team of several nodes");
  } catch (const hreduce::UnusableTeamError& e) {
    if (one_node) fail(when + ": resynchronize() refused a team of one node: " + e.what());
  } catch (const hreduce::Error& e) {
    fail(when + ": resynchronize() threw " + hreduce::test::class_tag(e) + e.what());
  }
  if (!one_node) {
    if (team.usable()) fail(when + ": usable() is true after resynchronize() refused");
    return false;
  }
  if (!team.usable()) fail(when + ": usable() is false after resynchronize()");
  expect_sum(team, s, (when + ", after resynchronize()").c_str());
  return true;
}

void late_arrival(const Settings& s) {
  int processes = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const char* per_node = std::getenv("HREDUCE_PROCS_PER_NODE");
  const bool one_node = per_node != nullptr && std::atoi(per_node) >= processes;
  const char* env = std::getenv("HREDUCE_TIMEOUT_MS");
  const auto timeout =
      s.source == "env" && env != nullptr ? std::chrono::milliseconds(std::atoi(env)) : s.timeout;
  auto team = build_team(s);
  expect_sum(*team, s, "before any fault");
  for (int round = 1; round <= s.rounds; ++round) {
    const bool late_here = world_rank == s.victim;
    expect_failed_call(allreduce_everywhere(*team, s, late_here, 2 * timeout), late_here, round);
    if (!expect_after_failure(*team, s, one_node, round)) {
      team.reset();  // destroyed without hanging, then a fresh one
      team = build_team(s);
      expect_sum(*team, s, ("round " + std::to_string(round) + ", new team").c_str());
    }
  }
}

// The victim is killed (SIGKILL) before the call; the others check what
// they got, and end without MPI (a rank is gone): the script counts their
// PASS lines.
void killed(const Settings& s) {
  auto team = build_team(s);
  expect_sum(*team, s, "before any fault");
  PMPI_Barrier(MPI_COMM_WORLD);
  if (world_rank == s.victim) raise(SIGKILL);
  expect_failed_call(allreduce_everywhere(*team, s, false, 0ms), false, 1);
  if (team->usable()) fail("usable() is true after the failed call");
  try {
    team->resynchronize();
    fail("resynchronize() accepted a team that lost a process");
  } catch (const hreduce::UnusableTeamError&) {
  } catch (const hreduce::Error& e) {
    fail(std::string("resynchronize() threw ") + hreduce::test::class_tag(e) + e.what());
  }
  team.reset();  // destroyed without hanging
  if (failures == 0) std::printf("PASS: process %d survived\n", world_rank);
  std::fflush(stdout);
  std::_Exit(failures > 0 ? 1 : 0);
}

// Member 0 asks for exact, the others for run_to_run.
void mixed_levels(const Settings& s) {
  auto team = build_team(s);
  std::vector<std::string> messages(static_cast<std::size_t>(s.threads));
  team->run([&](hreduce::Member& m) {
    const int local = m.rank() - world_rank * s.threads;
    hreduce::CollectiveOptions options;
    if (local == 0) options.reproducibility = hreduce::Reproducibility::exact;
    std::vector<double> in(100, m.rank() + 0.5), out(100);
    std::string& message = messages[static_cast<std::size_t>(local)];
    try {
      m.allreduce(in, out, hreduce::op::sum, options);
      message = "no error";
    } catch (const hreduce::Error& e) {
      message = hreduce::test::class_tag(e) + e.what();
    }
  });
  if (world_rank == 0) std::printf("member 0 got: %s\n", messages[0].c_str());
  for (const std::string& message : messages) {
    const bool names = message.find("reproducibility") != std::string::npos &&
                       message.find("exact") != std::string::npos &&
                       message.find("run_to_run") != std::string::npos;
    if (message.rfind("[ArgumentError] ", 0) != 0 || !names) {
      fail(
          "mixed levels: expected ArgumentError naming the reproducibility level of each "
          "member, got " +
          message);
    }
  }
  if (!team->usable()) fail("mixed levels: usable() is false after an ArgumentError");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const std::string mode = argc > 1 ? argv[1] : "";
  Settings s;
  if (mode == "late" && argc == 6) {
    s.source = argv[2];
    s.victim = std::atoi(argv[3]);
    s.rounds = std::atoi(argv[4]);
    s.threads = std::atoi(argv[5]);
    late_arrival(s);
  } else if (mode == "killed" && argc == 5) {
    s.source = argv[2];
    s.victim = std::atoi(argv[3]);
    s.threads = std::atoi(argv[4]);
    killed(s);
  } else if (mode == "levels" && argc == 3) {
    s.source = "options";
    s.threads = std::atoi(argv[2]);
    mixed_levels(s);
  } else {
    fail(
        "usage: late SOURCE VICTIM ROUNDS THREADS | killed SOURCE VICTIM THREADS | levels THREADS");
  }
  if (failures == 0) std::printf("PASS: process %d\n", world_rank);
  std::fflush(stdout);
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst > 0 ? 1 : 0;
}
