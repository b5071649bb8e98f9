// C++ through gbs::gbs and gbs.hpp: ln Z of a 3-d standard normal with the
// normalizing constant left out, ln Z = (3/2) ln(2 pi), within 4 sigma.
#include <gbs.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  const int64_t n = 4000, d = 3;
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  std::vector<double> x(static_cast<size_t>(n * d));
  for (double &v : x) v = normal(rng);
  auto opt = gbs::evidence_options();
  opt.independent = 1;
  opt.seed = 1;
  gbs::result r = gbs::evidence(
      [](const double *p, int64_t m, int64_t dim, double *out) {
        for (int64_t i = 0; i < m; i++) {
          double s = 0;
          for (int64_t k = 0; k < dim; k++) s += p[i * dim + k] * p[i * dim + k];
          out[i] = -0.5 * s;
        }
      },
      x, d, opt);
  const double exact = 1.5 * std::log(2 * M_PI);
  std::printf("consumer_cpp: ln Z = %.4f +/- %.4f, exact %.4f\n", r.logz, r.logzerr, exact);
  return std::fabs(r.logz - exact) < 4 * r.logzerr && r.logzerr < 0.05 ? 0 : 1;
}
