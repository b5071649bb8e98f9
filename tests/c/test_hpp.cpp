// gbs.hpp, the header-only C++17 layer: gbs::evidence with capturing
// lambdas and std::vector / pointer+size inputs, exceptions from a
// throwing callback and from the library, and the RAII flow handle.
#include "common.h"

#include <gbs.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void report(const char *what, const gbs::result &r, double exact) {
  std::printf("%-28s ln Z = %.5f +/- %.5f (exact %.6f, %+.2f sigma)\n", what, r.logz,
              r.logzerr, exact, (r.logz - exact) / r.logzerr);
  CHECK(std::fabs(r.logz - exact) < 4 * r.logzerr, "%s: %g +/- %g, exact %g", what, r.logz,
        r.logzerr, exact);
  CHECK(r.logzerr > 0 && r.logzerr < 0.1, "%s: logzerr %g", what, r.logzerr);
  CHECK(!r.trace.empty() && r.trace.back().logz == r.logz, "%s: trace of %zu points", what,
        r.trace.size());
}

// The funnel through a capturing lambda that counts its calls.
void test_funnel_lambda() {
  const int64_t n = 4000, d = FUNNEL_D;
  std::vector<double> x(static_cast<size_t>(n * d));
  test_rng rng = rng_new(2024);
  funnel_sample(&rng, x.data(), n, d);
  long calls = 0;
  auto opt = gbs::evidence_options();
  opt.independent = 1;
  opt.seed = 3;
  gbs::result r = gbs::evidence(
      [&calls](const double *pts, int64_t m, int64_t dim, double *out) {
        calls += static_cast<long>(m);
        for (int64_t i = 0; i < m; i++) out[i] = funnel_logp_point(pts + i * dim, dim);
      },
      x, d, opt);
  report("gbs::evidence funnel (lambda)", r, FUNNEL_LOGZ);
  CHECK(calls == r.ncall, "lambda counted %ld, result %lld", calls,
        static_cast<long long>(r.ncall));
}

// A 2-d Gaussian given as pointer + size, two chains, with log p at the
// draws supplied (so only proposal draws are evaluated).
void test_gaussian_pointer() {
  const double mu[2] = {-1, 4}, sd[2] = {3, 0.25};
  gaussian_target g = {2, -7.5, mu, sd};
  const int64_t n = 3000;
  std::vector<double> x(static_cast<size_t>(2 * n));
  test_rng rng = rng_new(77);
  gaussian_sample(&g, &rng, x.data(), n);
  std::vector<double> lp(static_cast<size_t>(n));
  gaussian_logp(x.data(), n, 2, lp.data(), &g);
  auto opt = gbs::evidence_options();
  opt.independent = 1;
  opt.seed = 5;
  struct functor {  // a function object returning the C status code
    const gaussian_target *g;
    int operator()(const double *pts, int64_t m, int64_t dim, double *out) const {
      return gaussian_logp(pts, m, dim, out, const_cast<gaussian_target *>(g));
    }
  };
  gbs::result r = gbs::evidence(functor{&g}, gbs::doubles(x.data(), x.size()), 2, opt,
                                /*n_chains=*/2, lp);
  report("gbs::evidence gaussian (2 chains)", r, g.c);
  // log p at the draws was given: only the proposal draws, the 32 draws
  // of the spot-check and the coverage check's widened draws are
  // evaluated.
  CHECK(r.ncall == r.n_q + 32 + r.diagnostics.coverage_calls + r.diagnostics_ext.symmetry_calls &&
            r.diagnostics.spot_checked == 32,
        "ncall %lld, n_q %lld: log p at the draws was given",
        static_cast<long long>(r.ncall), static_cast<long long>(r.n_q));
}

// Failures: the callback's own exception comes back unchanged; a non-zero
// return and bad input come back as gbs::error with the library's message;
// a shape error is caught before the call.
void test_errors() {
  std::vector<double> x(2 * 500);
  test_rng rng = rng_new(9);
  for (double &v : x) v = rng_normal(&rng);
  struct my_error : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  bool caught = false;
  try {
    gbs::evidence([](const double *, int64_t, int64_t, double *) { throw my_error("boom"); }, x, 2);
  } catch (const my_error &e) {
    caught = std::string(e.what()) == "boom";
  }
  CHECK(caught, "the callback's exception did not come back");

  caught = false;
  try {
    gbs::evidence([](const double *, int64_t, int64_t, double *) { return 5; }, x, 2);
  } catch (const gbs::error &e) {
    caught = e.status() == GBS_ERR_CALLBACK &&
             std::string(e.what()).find("returned error code 5") != std::string::npos;
    std::printf("  non-zero return -> gbs::error %d: %s\n", e.status(), e.what());
  }
  CHECK(caught, "no gbs::error for a failing callback");

  caught = false;
  std::vector<double> bad = x;
  bad[7] = NAN;
  try {
    gbs::evidence([](const double *, int64_t m, int64_t, double *out) {
      for (int64_t i = 0; i < m; i++) out[i] = 0;
    }, bad, 2);
  } catch (const gbs::error &e) {
    caught = e.status() == GBS_ERR_FAILED && std::string(e.what()).find("NaN") != std::string::npos;
    std::printf("  NaN sample -> gbs::error %d: %s\n", e.status(), e.what());
  }
  CHECK(caught, "no gbs::error naming the NaN");

  caught = false;
  try {
    gbs::evidence([](const double *, int64_t, int64_t, double *) {}, gbs::doubles(x.data(), 7), 2);
  } catch (const std::invalid_argument &e) {
    caught = std::string(e.what()).find("not a multiple of") != std::string::npos;
  }
  CHECK(caught, "no std::invalid_argument for 7 values in d = 2");
}

// The RAII flow: fit, log_prob, sample, save/load, move.
void test_flow() {
  const int64_t n = 2000, d = 3;
  std::vector<double> x(static_cast<size_t>(n * d));
  test_rng rng = rng_new(11);
  for (int64_t i = 0; i < n; i++) {
    double a = rng_normal(&rng);
    x[static_cast<size_t>(i * d)] = a;
    x[static_cast<size_t>(i * d + 1)] = a * a + 0.3 * rng_normal(&rng);
    x[static_cast<size_t>(i * d + 2)] = std::exp(0.5 * rng_normal(&rng));
  }
  auto opt = gbs::flow_options();
  opt.seed = 1;
  opt.layers = 2;
  gbs::flow f = gbs::flow::fit(x, d, opt);
  CHECK(f.dim() == d, "dim %lld", static_cast<long long>(f.dim()));
  std::vector<double> draws = f.sample(500, 4);
  CHECK(draws.size() == 500 * 3, "sample size %zu", draws.size());
  CHECK(f.sample(500, 4) == draws, "same seed, different draws");
  std::vector<double> lq = f.log_prob(draws);
  bool finite = true;
  for (double v : lq) finite = finite && std::isfinite(v);
  CHECK(lq.size() == 500 && finite, "log_prob of its own draws");

  const std::string path = "test_hpp_flow.bin";
  f.save(path);
  gbs::flow g = gbs::flow::load(path);
  std::remove(path.c_str());
  std::vector<double> lq2 = g.log_prob(draws);
  for (size_t i = 0; i < lq.size(); i++)
    CHECK(std::fabs(lq2[i] - lq[i]) <= 1e-12 * (1 + std::fabs(lq[i])), "loaded flow differs at %zu", i);

  gbs::flow moved = std::move(f);
  CHECK(f.handle() == nullptr && moved.handle() != nullptr, "move left the handle behind");
  CHECK(gbs_debug_live_allocations() == 2, "%lld live allocations with two flows",
        static_cast<long long>(gbs_debug_live_allocations()));

  bool caught = false;
  try {
    std::array<double, 4> four{};
    moved.log_prob(four);
  } catch (const std::invalid_argument &) {
    caught = true;
  }
  CHECK(caught, "4 values accepted as points of dimension 3");
}

}  // namespace

int main() {
  std::printf("gbs %s (header %d.%d.%d)\n", gbs::version().c_str(), GBS_VERSION_MAJOR,
              GBS_VERSION_MINOR, GBS_VERSION_PATCH);
  try {
    test_funnel_lambda();
    test_gaussian_pointer();
    test_errors();
    test_flow();
  } catch (const std::exception &e) {
    CHECK(false, "exception: %s", e.what());
  }
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations",
        static_cast<long long>(gbs_debug_live_allocations()));
  return test_summary("test_hpp");
}
