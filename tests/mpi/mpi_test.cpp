// Teams across the processes of MPI_COMM_WORLD (run by run_mpi.sh under
// mpirun with HREDUCE_PROCS_PER_NODE set): every collective against the
// sequential oracle over team ranks, against MPI's own collectives for
// integer ops, bitwise agreement across processes, and the faults.
#include <mpi.h>
#include <catch2/catch.hpp>
#include <memory>

#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#include "hreduce/mpi.hpp"
#include "src/transport/mpi_channel.hpp"
#include "tests/engine/families.hpp"
#include "tests/engine/harness.hpp"
#include "tests/support/exact_oracle.hpp"

using namespace hreduce;
using namespace hreduce::test;

namespace {

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

// Threads per process: the same count everywhere, or uneven (1, 2, 3, 1, …).
int threads_for(int setting, int rank = world_rank()) {
  return setting > 0 ? setting : rank % 3 + 1;
}

Team make_team(int setting) {
  TeamOptions options;
  options.topology = Topology::synthetic("pack:1 core:2 pu:2");
  return make_mpi_team(MPI_COMM_WORLD, threads_for(setting), options);
}

// Every rank's verdict: true only if all agree it passed.
bool everywhere(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

template <class Fam>
std::string check(Team& team, const Fam& fam, Collective c, std::size_t n, bool in_place,
                  int root) {
  CollectiveCheck<Fam> check(fam, c, team.size(), n, in_place, root);
  team.run([&](Member& m) { check.run(m, CollectiveOptions{}); });
  const int first = team.member(0).rank();
  return check.verify(first, first + team.local_size());
}

}  // namespace

TEST_CASE("MPI teams match the sequential oracle", "[mpi][conformance]") {
  const int setting = GENERATE(1, 2, 3, 0);  // 0: uneven thread counts
  Team team = make_team(setting);
  INFO(world_size() << " processes, threads setting " << setting << ", " << team.size()
                    << " members");
  for_each_family([&](const auto& fam) {
    // Every type through the sums, the pair and the user op at all sizes;
    // the other op families at two sizes, to keep oversubscribed runs short.
    const bool every_size = fam.name.find("sum") != std::string::npos ||
                            fam.name.find("user Affine (") != std::string::npos ||
                            fam.name.find("minloc") != std::string::npos;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      if (!every_size && (n == 0 || n == 7)) continue;
      for (Collective c : all_collectives()) {
        for (bool in_place : {false, true}) {
          const int root = c == Collective::reduce && n == 7 ? team.size() - 1 : 0;
          const std::string problem = check(team, fam, c, n, in_place, root);
          if (!everywhere(problem.empty())) {
            FAIL_CHECK(fam.name << " " << name_of(c) << " n=" << n << (in_place ? " in place" : "")
                                << ": "
                                << (problem.empty() ? "fine here, wrong elsewhere" : problem));
          }
        }
      }
    }
  });
}

TEST_CASE("integer results equal MPI's own collectives", "[mpi]") {
  const int setting = GENERATE(1, 0);
  Team team = make_team(setting);
  const int P = world_size(), me = world_rank();
  const int first = team.member(0).rank(), here = team.local_size();
  const std::size_t n = 257;
  auto input = [](int member, std::size_t i) {
    return static_cast<long long>((member * 1000003LL + static_cast<long long>(i) * 7919) %
                                  100000) -
           50000;
  };
  // This process's contribution on a flat communicator of processes: its
  // members' inputs combined in rank order.
  std::vector<long long> mine(n, 0);
  for (int t = 0; t < here; ++t) {
    for (std::size_t i = 0; i < n; ++i) mine[i] += input(first + t, i);
  }
  std::vector<std::vector<long long>> in(here, std::vector<long long>(n)), all = in, pre = in,
                                                                           ex = in;
  for (int t = 0; t < here; ++t) {
    for (std::size_t i = 0; i < n; ++i) in[t][i] = input(first + t, i);
  }
  team.run([&](Member& m) {
    const int t = m.rank() - first;
    m.allreduce(in[t].data(), all[t].data(), n, op::sum);
    m.scan(in[t].data(), pre[t].data(), n, op::sum);
    m.exscan(in[t].data(), ex[t].data(), n, op::sum);
  });
  std::vector<long long> mpi_all(n), mpi_ex(n, 0), mpi_scan(n);
  MPI_Allreduce(mine.data(), mpi_all.data(), static_cast<int>(n), MPI_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  MPI_Scan(mine.data(), mpi_scan.data(), static_cast<int>(n), MPI_LONG_LONG, MPI_SUM,
           MPI_COMM_WORLD);
  MPI_Exscan(mine.data(), mpi_ex.data(), static_cast<int>(n), MPI_LONG_LONG, MPI_SUM,
             MPI_COMM_WORLD);
  if (me == 0) std::fill(mpi_ex.begin(), mpi_ex.end(), 0);
  bool ok = true;
  std::vector<long long> running = mpi_ex;  // lower processes, then this one's members
  for (int t = 0; t < here; ++t) {
    ok &= all[t] == mpi_all;
    if (first + t > 0) ok &= ex[t] == running;
    for (std::size_t i = 0; i < n; ++i) running[i] += in[t][i];
    ok &= pre[t] == running;
  }
  ok &= pre[here - 1] == mpi_scan;  // a process's last member: MPI_Scan over processes
  // reduce_scatter: this process's members' blocks, in order, are its block
  // of MPI_Reduce_scatter over processes.
  std::vector<int> member_counts(team.size()), process_counts(P, 0);
  for (int r = 0; r < team.size(); ++r) member_counts[r] = (r * 5 + 3) % 11;
  std::vector<std::size_t> counts(member_counts.begin(), member_counts.end());
  {
    std::vector<int> threads(P);
    const int t_here = here;
    MPI_Allgather(&t_here, 1, MPI_INT, threads.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int r = 0;
    for (int p = 0; p < P; ++p) {
      for (int t = 0; t < threads[p]; ++t) process_counts[p] += member_counts[r++];
    }
  }
  std::size_t whole = 0;
  for (std::size_t c : counts) whole += c;
  std::vector<std::vector<long long>> rs_in(here, std::vector<long long>(whole)),
      rs_out(here, std::vector<long long>(whole));
  std::vector<long long> flat_in(whole, 0);
  for (int t = 0; t < here; ++t) {
    for (std::size_t i = 0; i < whole; ++i) flat_in[i] += (rs_in[t][i] = input(first + t, i));
  }
  team.run([&](Member& m) {
    const int t = m.rank() - first;
    m.reduce_scatter(rs_in[t].data(), rs_out[t].data(), std::span<const std::size_t>(counts),
                     op::sum);
  });
  std::vector<long long> mpi_block(std::max(process_counts[me], 1));
  MPI_Reduce_scatter(flat_in.data(), mpi_block.data(), process_counts.data(), MPI_LONG_LONG,
                     MPI_SUM, MPI_COMM_WORLD);
  std::size_t at = 0;
  for (int t = 0; t < here; ++t) {
    for (std::size_t i = 0; i < counts[first + t]; ++i) ok &= rs_out[t][i] == mpi_block[at++];
  }
  // reduce to the last member equals MPI_Reduce to the last process.
  std::vector<long long> mpi_reduced(n), reduced(n, 0);
  MPI_Reduce(mine.data(), mpi_reduced.data(), static_cast<int>(n), MPI_LONG_LONG, MPI_SUM, P - 1,
             MPI_COMM_WORLD);
  team.run([&](Member& m) {
    m.reduce(in[m.rank() - first].data(), reduced.data(), n, op::sum, m.size() - 1);
  });
  if (me == P - 1) ok &= reduced == mpi_reduced;
  CHECK(everywhere(ok));
}

TEST_CASE("allreduce of doubles is bitwise identical on every member of every process",
          "[mpi][determinism]") {
  Team team = make_team(0);
  const int first = team.member(0).rank(), here = team.local_size();
  const std::size_t n = 20000;
  std::vector<std::vector<double>> in(here, std::vector<double>(n)), out = in;
  for (int t = 0; t < here; ++t) {
    std::mt19937_64 rng(first + t);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (double& x : in[t]) x = dist(rng) * 1e3;
  }
  std::uint64_t first_hash = 0;
  for (int rep = 0; rep < 5; ++rep) {
    team.run([&](Member& m) {
      m.allreduce(in[m.rank() - first].data(), out[m.rank() - first].data(), n, op::sum);
    });
    std::uint64_t hash = 1469598103934665603ull;
    for (int t = 0; t < here; ++t) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(out[t].data());
      std::uint64_t h = 1469598103934665603ull;
      for (std::size_t i = 0; i < n * sizeof(double); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
      if (t == 0) hash = h;
      CHECK(h == hash);
    }
    std::uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&hash, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hash, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi);
    if (rep == 0) first_hash = hash;
    CHECK(hash == first_hash);
  }
}

namespace {

const auto throwing_sum = make_op<int>([](int a, int b) {
  if (a == 13 || b == 13) throw std::runtime_error("boom: saw 13");
  return a + b;
});

template <class Fn>
bool all_members_throw(Team& team, const std::string& part, Fn&& fn) {
  std::vector<std::string> messages(team.local_size());
  const int first = team.member(0).rank();
  team.run([&](Member& m) {
    try {
      fn(m);
    } catch (const Error& e) {
      messages[m.rank() - first] = e.what();
    }
  });
  bool ok = true;
  for (const auto& e : messages) {
    INFO(e);
    ok &= e.find(part) != std::string::npos;
  }
  return everywhere(ok);
}

}  // namespace

TEST_CASE("faults reach every member of every process", "[mpi][negative]") {
  Team team = make_team(0);
  const int last = team.size() - 1;
  // A one-member team never applies the op, so nothing can throw there.
  CHECK(all_members_throw(team, "boom: saw 13", [&](Member& m) {
          std::vector<int> in(4, 1), out(4);
          if (m.rank() == last) in[1] = 13;
          m.allreduce(in.data(), out.data(), 4, throwing_sum);
        }) == (team.size() > 1));
  CHECK(all_members_throw(team, "processes disagree", [&](Member& m) {
          std::vector<double> in(9, 1), out(9);
          m.allreduce(in.data(), out.data(),
                      world_rank() == world_size() - 1 && world_size() > 1 ? 9 : 8, op::sum);
        }) == (world_size() > 1));
  CHECK(all_members_throw(team, "root", [&](Member& m) {
    double x = 1, y = 0;
    m.reduce(&x, &y, 1, op::sum, m.size());
  }));
  // Still usable afterwards.
  const auto sum =
      family<long>("long sum", op::sum, [](int m, std::size_t i) { return small(m, i, 50); });
  CHECK(everywhere(check(team, sum, Collective::allreduce, 33, false, 0).empty()));
}

TEST_CASE("an MPI error becomes an Error carrying MPI's message", "[mpi][negative]") {
  detail::MpiChannel channel(MPI_COMM_WORLD);
  int x = 0;
  try {
    channel.send(world_size() + 5, &x, sizeof x, 1);
    FAIL("sending to a rank that does not exist succeeded");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("MPI send of 4 bytes to rank"));
    CHECK_THAT(e.what(), Catch::Contains("MPI_ERR_RANK") || Catch::Contains("invalid rank"));
  }
}

TEST_CASE("a forced inter-process algorithm equals MPI_Allreduce; a bad one is refused", "[mpi]") {
  TeamOptions options;
  options.topology = Topology::synthetic("pack:1 core:2 pu:2");
  for (auto algorithm : {AllreduceAlgorithm::recursive_doubling, AllreduceAlgorithm::rabenseifner,
                         AllreduceAlgorithm::ring}) {
    MpiTeamOptions mpi;
    mpi.allreduce = algorithm;
    mpi.reduce_scatter = ReduceScatterAlgorithm::pairwise;
    Team team = make_mpi_team(MPI_COMM_WORLD, 1, options, mpi);
    const std::size_t n = 1000;
    std::vector<long long> in(n), out(n), expected(n);
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = static_cast<long long>(i * 7 + team.member(0).rank());
    }
    team.member(0).allreduce(in, out, op::sum);
    MPI_Allreduce(in.data(), expected.data(), static_cast<int>(n), MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    CHECK(everywhere(out == expected));
  }
  MpiTeamOptions bad;
  bad.allreduce = static_cast<AllreduceAlgorithm>(9);
  CHECK_THROWS_AS(make_mpi_team(MPI_COMM_WORLD, 1, options, bad), ArgumentError);
  bad = {};
  bad.reduce_scatter = static_cast<ReduceScatterAlgorithm>(9);
  CHECK_THROWS_WITH(make_mpi_team(MPI_COMM_WORLD, 1, options, bad),
                    Catch::Contains("MpiTeamOptions::reduce_scatter is 9"));
}

TEST_CASE("the chosen inter-process algorithm can be explained", "[mpi]") {
  Team team = make_team(1);
  const std::string why = team.explain(Collective::allreduce, 8 << 20);
  CHECK_THAT(why, Catch::Contains(std::to_string(world_size()) + " processes"));
  const char* per_node = std::getenv("HREDUCE_PROCS_PER_NODE");
  const int k = per_node ? std::atoi(per_node) : 0;
  if (world_size() == 1 || k == 1) {
    CHECK_THAT(why, Catch::Contains("µs") || Catch::Contains("us"));  // messages only
  } else if (k == 0 || k >= world_size()) {
    // One node: a bounded segment, whatever the vector length.
    CHECK_THAT(why, Catch::Contains("shared segment") && Catch::Contains("no messages"));
  } else {
    CHECK_THAT(why, Catch::Contains("shared segment") && Catch::Contains("node leaders"));
  }
}

TEST_CASE("processes of one machine start their members where the machine's earlier ones end",
          "[mpi]") {
  // run_mpi.sh runs every rank on this machine unbound, as one node or as
  // virtual nodes: whatever the nodes, rank r's member 0 sits past the
  // members of ranks 0..r-1 (on the synthetic topology's 4 PUs, wrapping),
  // not at PU 0 of its virtual node.
  Team team = make_team(0);
  int before = 0;
  for (int p = 0; p < world_rank(); ++p) before += threads_for(0, p);
  INFO("rank " << world_rank() << ", " << before << " members before it on this machine");
  const std::vector<int>& pus = team.placement().pu_of_member;
  REQUIRE(static_cast<int>(pus.size()) == threads_for(0));
  for (int k = 0; k < threads_for(0); ++k) {
    CHECK(pus[static_cast<std::size_t>(k)] == (before + k) % 4);
  }
}

TEST_CASE("two processes of a node race the single copy and keep the same ways", "[mpi]") {
  // With HREDUCE_NODE_SINGLE_COPY=auto two processes sharing a node time
  // the single copy against the chunks per kind when the team is built;
  // every process must keep the same ways, or their calls would not meet.
  // A second team over the same processes keeps the verdict. Unset (on):
  // no race.
  const char* per_node = std::getenv("HREDUCE_PROCS_PER_NODE");
  const int k = per_node ? std::atoi(per_node) : 0;
  const bool pair = world_size() == 2 && (k == 0 || k >= 2);
  REQUIRE(std::getenv("HREDUCE_NODE_SINGLE_COPY") == nullptr);
  const std::string unset_why = make_team(1).explain(Collective::allreduce, 1 << 20);
  CHECK(unset_why.find("raced the chunks") == std::string::npos);
  for (int team_number = 0; team_number < 2; ++team_number) {
    setenv("HREDUCE_NODE_SINGLE_COPY", "auto", 1);
    Team team = make_team(1);
    unsetenv("HREDUCE_NODE_SINGLE_COPY");
    const std::string why = team.explain(Collective::allreduce, 1 << 20);
    INFO(why);
    const std::size_t raced = why.find("raced the chunks");
    if (world_size() == 1 || k == 1) CHECK(raced == std::string::npos);  // no pair at all
    if (!pair) continue;
    if (why.find("process_vm_readv") == std::string::npos) {
      WARN("the kernel refused the single copy here: no race");
      continue;
    }
    REQUIRE(raced != std::string::npos);
    const std::size_t from = why.find("; so the ", raced);
    REQUIRE(from != std::string::npos);
    const std::string verdict = why.substr(from, why.find(';', from + 1) - from);
    char first[512] = {};
    verdict.copy(first, sizeof first - 1);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(everywhere(verdict == std::string(first)));
  }
}

TEST_CASE("a long allreduce runs pipelined and equals MPI_Allreduce", "[mpi]") {
  Team team = make_team(0);
  const int first = team.member(0).rank(), here = team.local_size();
  const std::size_t n = 300000;  // 2.4 MB per member: above the 1 MiB pipeline threshold
  CHECK_THAT(team.explain(Collective::allreduce, n * sizeof(long long)),
             Catch::Contains("processes"));
  std::vector<std::vector<long long>> in(here, std::vector<long long>(n)), out = in;
  std::vector<long long> mine(n, 0), expected(n);
  for (int t = 0; t < here; ++t) {
    for (std::size_t i = 0; i < n; ++i)
      mine[i] += (in[t][i] = static_cast<long long>((first + t) * 31 + i % 1000));
  }
  team.run([&](Member& m) {
    const int t = m.rank() - first;
    if (t == 0) {
      m.allreduce(in[t].data(), out[t].data(), n, op::sum);
    } else {  // in place on the other members
      out[t] = in[t];
      m.allreduce(out[t].data(), out[t].data(), n, op::sum);
    }
  });
  MPI_Allreduce(mine.data(), expected.data(), static_cast<int>(n), MPI_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  bool ok = true;
  for (const auto& o : out) ok &= o == expected;
  CHECK(everywhere(ok));
}

TEST_CASE("a team over MPI moves into a unique_ptr and keeps working", "[mpi]") {
  auto team = std::make_unique<Team>(make_team(2));
  Team moved = std::move(*team);
  team.reset();
  const int p = moved.size();
  std::vector<long> out(moved.local_size(), -1);
  moved.run([&](Member& m) {
    const long in = m.rank() + 1;
    m.allreduce(&in, &out[m.rank() - moved.member(0).rank()], 1, op::sum);
  });
  for (long got : out) CHECK(got == static_cast<long>(p) * (p + 1) / 2);
}

TEST_CASE("reproducibility levels hold across MPI processes", "[mpi][reproducibility]") {
  Team team = make_team(0);  // uneven threads per process
  const int p = team.size(), first = team.member(0).rank();
  const auto fam = family<double>("double sum", op::sum, spread);
  for (std::size_t n : {std::size_t{1}, std::size_t{64}, std::size_t{5000}}) {
    for (Collective c : all_collectives()) {
      INFO(name_of(c) << " n " << n);
      // shape_independent: the left fold in rank order, which CollectiveCheck's
      // sequential oracle computes.
      CollectiveOptions shape;
      shape.reproducibility = Reproducibility::shape_independent;
      CollectiveCheck<decltype(fam)> folded(fam, c, p, n, false, p - 1);
      team.run([&](Member& m) { folded.run(m, shape); });
      CHECK(everywhere(folded.verify(first, first + team.local_size()).empty()));
    }
    // exact: the correctly rounded sum of each element's values.
    CollectiveOptions exact;
    exact.reproducibility = Reproducibility::exact;
    std::vector<std::vector<double>> in(team.local_size(), std::vector<double>(n)), out = in;
    for (int t = 0; t < team.local_size(); ++t) {
      for (std::size_t i = 0; i < n; ++i) in[t][i] = spread(first + t, i);
    }
    team.run([&](Member& m) {
      m.scan(in[m.rank() - first].data(), out[m.rank() - first].data(), n, op::sum, exact);
    });
    bool ok = true;
    for (int t = 0; t < team.local_size(); ++t) {
      for (std::size_t i = 0; i < n; ++i)
        ok &= same_bits(out[t][i], exact_sum_of_spread(first + t, i));
    }
    CHECK(everywhere(ok));
  }
}

namespace {

// Member r's input: small integers, so every sum is exact.
long input_value(int r, std::size_t i) { return (r * 7 + static_cast<long>(i) * 3) % 11 - 5; }
long sum_upto(int last, std::size_t i) {  // ranks 0 .. last-1
  long s = 0;
  for (int q = 0; q < last; ++q) s += input_value(q, i);
  return s;
}

// Member m's nonblocking calls of every kind, several outstanding at once
// and completed in reverse order (test() loops and wait()), then a
// persistent allreduce started three times; empty when every output is
// the sequential oracle's.
std::string nonblocking_calls(Member& m) {
  const int r = m.rank(), p = m.size();
  const std::size_t n = 1500;
  std::vector<long> in(n * static_cast<std::size_t>(p)), all(n), red(n), sc(n), ex(n), blk(n);
  std::vector<long> rs(n + 1);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = input_value(r, i);
  std::vector<std::size_t> counts(static_cast<std::size_t>(p));
  for (int q = 0; q < p; ++q)
    counts[static_cast<std::size_t>(q)] = n - static_cast<std::size_t>(q % 2);
  Request q[6];
  q[0] = m.iallreduce(in.data(), all.data(), n, op::sum);
  q[1] = m.ireduce(in.data(), red.data(), n, op::sum, p - 1);
  q[2] = m.iscan(in.data(), sc.data(), n, op::sum);
  q[3] = m.iexscan(in.data(), ex.data(), n, op::sum);
  q[4] = m.ireduce_scatter_block(in.data(), blk.data(), n, op::sum);
  q[5] = m.ireduce_scatter(in.data(), rs.data(), counts, op::sum);
  for (int k = 5; k >= 0; --k) {
    if (k % 2 == 0) {
      q[k].wait();
    } else {
      while (!q[k].test()) {
      }
    }
  }
  std::size_t offset = 0;
  for (int k = 0; k < r; ++k) offset += counts[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < n; ++i) {
    if (all[i] != sum_upto(p, i)) return "iallreduce";
    if (r == p - 1 && red[i] != sum_upto(p, i)) return "ireduce";
    if (sc[i] != sum_upto(r + 1, i)) return "iscan";
    if (r > 0 && ex[i] != sum_upto(r, i)) return "iexscan";
    if (blk[i] != sum_upto(p, n * static_cast<std::size_t>(r) + i)) return "ireduce_scatter_block";
    if (i < counts[static_cast<std::size_t>(r)] && rs[i] != sum_upto(p, offset + i)) {
      return "ireduce_scatter";
    }
  }
  PersistentRequest again = m.allreduce_init(in.data(), all.data(), n, op::sum);
  for (int round = 1; round <= 3; ++round) {
    for (std::size_t i = 0; i < n; ++i) in[i] = input_value(r, i) + round;
    again.start();
    m.allreduce(&in[0], &red[0], 1, op::sum);  // a blocking call after it, in order
    again.wait();
    for (std::size_t i = 0; i < n; ++i) {
      if (all[i] != sum_upto(p, i) + static_cast<long>(p) * round) return "persistent allreduce";
    }
  }
  return {};
}

}  // namespace

TEST_CASE("nonblocking and persistent calls on teams over MPI match the sequential oracle",
          "[mpi][nonblocking]") {
  for (int setting : {1, 2, 0}) {
    Team team = make_team(setting);
    std::vector<std::string> failures(static_cast<std::size_t>(team.local_size()));
    team.run([&](Member& m) {
      try {
        failures[static_cast<std::size_t>(m.rank() - team.member(0).rank())] = nonblocking_calls(m);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(m.rank() - team.member(0).rank())] = e.what();
      }
    });
    bool ok = true;
    for (const std::string& f : failures) {
      if (!f.empty()) UNSCOPED_INFO("threads " << setting << ": " << f);
      ok = ok && f.empty();
    }
    REQUIRE(everywhere(ok));
  }
}

TEST_CASE("a nonblocking call whose members disagree fails on every member", "[mpi][nonblocking]") {
  Team team = make_team(2);
  std::vector<int> threw(static_cast<std::size_t>(team.local_size()), 0);
  team.run([&](Member& m) {
    std::vector<int> in(16, 1), out(16);
    const std::size_t n = m.rank() == 0 ? 15 : 16;
    Request r = m.iallreduce(in.data(), out.data(), n, op::sum);
    try {
      r.wait();
    } catch (const ArgumentError&) {
      threw[static_cast<std::size_t>(m.rank() - team.member(0).rank())] = 1;
    }
    // The team stays usable.
    Request again = m.iallreduce(in.data(), out.data(), 16, op::sum);
    again.wait();
    if (out[0] != m.size()) threw[static_cast<std::size_t>(m.rank() - team.member(0).rank())] = 0;
  });
  bool all = true;
  for (int t : threw) all = all && t == 1;
  REQUIRE(everywhere(all));
}
