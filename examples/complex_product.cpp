// docs/spec.md's example: the product of 100 complex numbers per member, reduced
// with a user op that multiplies (a.re·b.re − a.im·b.im, a.re·b.im + a.im·b.re).
// Run: bazel run //examples:complex_product
#include <cstdio>
#include <vector>

#include "hreduce/team.hpp"

struct Complex {
  double re, im;
};

int main() {
  const auto multiply = hreduce::make_op<Complex>([](const Complex& a, const Complex& b) {
    return Complex{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  });
  hreduce::TeamOptions options;
  options.members = 4;
  hreduce::Team team(options);
  constexpr int kCount = 100;
  auto input = [](int rank, int i) {  // exact in binary: the product is exact
    return Complex{(rank + i) % 2 ? 1.0 : 0.0, (rank + i) % 2 ? 0.0 : 1.0};  // 1 or i
  };
  std::vector<Complex> product(kCount);

  team.run([&](hreduce::Member& m) {
    std::vector<Complex> mine(kCount);
    for (int i = 0; i < kCount; ++i) mine[i] = input(m.rank(), i);
    m.reduce(mine.data(), product.data(), kCount, multiply, /*root=*/0);
  });

  int wrong = 0;
  for (int i = 0; i < kCount; ++i) {
    Complex expected{1, 0};
    for (int r = 0; r < team.size(); ++r) {
      const Complex x = input(r, i);
      expected = {expected.re * x.re - expected.im * x.im, expected.re * x.im + expected.im * x.re};
    }
    wrong += product[i].re != expected.re || product[i].im != expected.im;
  }
  std::printf("product[0] = %g%+gi, product[1] = %g%+gi; %d of %d wrong\n", product[0].re,
              product[0].im, product[1].re, product[1].im, wrong, kCount);
  return wrong == 0 ? 0 : 1;
}
