// Every collective in every form a user may write: pointers and a count,
// ranges (std::vector, std::array, C arrays, std::span const or not), in
// place, each with and without per-call options. All must compile and give
// the sequential oracle's result.
#include <array>
#include <catch2/catch.hpp>
#include <span>
#include <vector>

#include "hreduce/team.hpp"

using namespace hreduce;

namespace {

constexpr int kMembers = 3;
constexpr std::size_t kN = 4;

Team team_of_three() {
  TeamOptions options;
  options.members = kMembers;
  options.topology = Topology::synthetic("pack:1 core:3 pu:1");
  return Team(options);
}

// Member m's input: distinct small integers, exact in every order.
double value(int m, std::size_t i) { return 10.0 * m + static_cast<double>(i) + 1; }

std::vector<double> input_of(int m, std::size_t n) {
  std::vector<double> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = value(m, i);
  return in;
}

// x_first + … + x_{last-1} at element i.
double fold(int first, int last, std::size_t i) {
  double acc = 0;
  for (int q = first; q < last; ++q) acc += value(q, i);
  return acc;
}

}  // namespace

TEST_CASE("reduce, allreduce, scan and exscan take pointers, ranges and one range in place",
          "[engine][api]") {
  Team team = team_of_three();
  CollectiveOptions sliced;
  sliced.algorithm = Algorithm::sliced;
  std::vector<std::vector<double>> got(kMembers * 12, std::vector<double>(kN, -1.0));
  team.run([&](Member& m) {
    const int r = m.rank();
    auto slot = [&](int form) -> std::vector<double>& { return got[form * kMembers + r]; };
    const std::vector<double> in = input_of(r, kN);
    std::array<double, kN> array_in{};
    double c_array_out[kN] = {-1, -1, -1, -1};
    std::copy(in.begin(), in.end(), array_in.begin());

    m.allreduce(in.data(), slot(0).data(), kN, op::sum);  // pointers
    m.allreduce(in, slot(1), op::sum, sliced);            // vectors, options
    m.allreduce(array_in, c_array_out, op::sum);          // array → C array
    std::copy(std::begin(c_array_out), std::end(c_array_out), slot(2).begin());
    slot(3) = in;
    m.allreduce(slot(3), op::sum);  // in place
    std::vector<double> mutable_in = in;
    m.allreduce(std::span<double>(mutable_in), std::span<double>(slot(4)), op::sum);  // spans

    m.reduce(in, r == 1 ? std::span<double>(slot(5)) : std::span<double>(), op::sum, 1);
    // A non-root's output may be null.
    m.reduce(in.data(), r == 2 ? slot(6).data() : nullptr, kN, op::sum, 2, sliced);
    slot(7) = in;
    m.reduce(slot(7), op::sum, 0);  // in place

    m.scan(in, slot(8), op::sum);
    slot(9) = in;
    m.scan(slot(9), op::sum, sliced);  // in place
    m.exscan(in, slot(10), op::sum);
    slot(11) = in;
    m.exscan(std::span<double>(slot(11)), op::sum);  // in place
  });
  auto form = [&](int f, int r) { return got[f * kMembers + r]; };
  for (int r = 0; r < kMembers; ++r) {
    INFO("member " << r);
    for (std::size_t i = 0; i < kN; ++i) {
      INFO("element " << i);
      for (int f = 0; f < 5; ++f) CHECK(form(f, r)[i] == fold(0, kMembers, i));
      CHECK(form(5, r)[i] == (r == 1 ? fold(0, kMembers, i) : -1.0));
      if (r == 2) CHECK(form(6, r)[i] == fold(0, kMembers, i));
      CHECK(form(7, r)[i] == (r == 0 ? fold(0, kMembers, i) : value(r, i)));
      CHECK(form(8, r)[i] == fold(0, r + 1, i));
      CHECK(form(9, r)[i] == fold(0, r + 1, i));
      CHECK(form(10, r)[i] == (r == 0 ? -1.0 : fold(0, r, i)));
      CHECK(form(11, r)[i] == (r == 0 ? value(0, i) : fold(0, r, i)));
    }
  }
}

TEST_CASE("reduce_scatter and reduce_scatter_block take pointers, ranges and one range in place",
          "[engine][api]") {
  Team team = team_of_three();
  const std::vector<std::size_t> counts = {1, 2, 1};  // starts 0, 1, 3
  const std::size_t starts[] = {0, 1, 3};
  std::vector<std::vector<double>> got(kMembers * 6, std::vector<double>(kN * kMembers, -1.0));
  team.run([&](Member& m) {
    const int r = m.rank();
    auto slot = [&](int form) -> std::vector<double>& { return got[form * kMembers + r]; };
    const std::vector<double> in = input_of(r, kN * kMembers);
    m.reduce_scatter(in.data(), slot(0).data(), counts, op::sum);
    m.reduce_scatter(in, slot(1), counts, op::sum, CollectiveOptions{});
    slot(2) = in;
    m.reduce_scatter(slot(2), counts, op::sum);  // in place: the block lands at the start
    m.reduce_scatter_block(in.data(), slot(3).data(), kN, op::sum);
    m.reduce_scatter_block(in, std::span<double>(slot(4)).first(kN), kN, op::sum);
    slot(5) = in;
    m.reduce_scatter_block(slot(5), kN, op::sum, CollectiveOptions{});  // in place
  });
  auto form = [&](int f, int r) { return got[f * kMembers + r]; };
  for (int r = 0; r < kMembers; ++r) {
    INFO("member " << r);
    for (int f = 0; f < 3; ++f) {
      for (std::size_t i = 0; i < counts[r]; ++i) {
        CHECK(form(f, r)[i] == fold(0, kMembers, starts[r] + i));
      }
    }
    for (int f = 3; f < 6; ++f) {
      for (std::size_t i = 0; i < kN; ++i) CHECK(form(f, r)[i] == fold(0, kMembers, r * kN + i));
    }
  }
}

TEST_CASE("a range too small for the collective is an ArgumentError on every member",
          "[engine][api][negative]") {
  Team team = team_of_three();
  std::vector<int> classes(kMembers, 0);
  team.run([&](Member& m) {
    std::vector<double> in(kN, 1), out(m.rank() == 1 ? kN - 1 : kN);
    try {
      m.allreduce(in, out, op::sum);
    } catch (const ArgumentError& e) {
      classes[m.rank()] =
          std::string(e.what()).find("out has 3 elements but 4 are needed") != std::string::npos
              ? 1
              : 2;
    }
  });
  CHECK(classes == std::vector<int>(kMembers, 1));
  CHECK(team.usable());
}
