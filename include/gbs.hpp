/* gbs.hpp: a header-only C++17 layer over the C ABI of libgbs (gbs.h).
 *
 *   #include <gbs.hpp>
 *   std::vector<double> x = ...;                 // n draws of d coordinates
 *   gbs::result r = gbs::evidence(
 *       [&](const double *pts, int64_t n, int64_t d, double *logp) {
 *         for (int64_t i = 0; i < n; i++) logp[i] = my_log_density(pts + i * d, d);
 *       },
 *       x, d);
 *   std::printf("ln Z = %g +/- %g\n", r.logz, r.logzerr);
 *
 * What it adds to gbs.h, and nothing else:
 *   - any callable (lambda with captures, functor, std::function) as the
 *     batch log density; an exception it throws stops the call and is
 *     rethrown to the caller unchanged;
 *   - gbs::error, an exception carrying the library's status and message,
 *     for every failing call;
 *   - gbs::flow, an RAII (move-only) owner of a gbs_flow handle;
 *   - gbs::doubles, a view of pointer + size built from any contiguous
 *     container of double (std::vector, std::array, std::span in C++20).
 * Options stay the C structs (gbs::evidence_options() and
 * gbs::flow_options() give them zeroed with size set), so every option of
 * the C ABI is available and the header needs no update when one is added.
 *
 * Link with libgbs as for C: `pkg-config --cflags --libs gbs`, or CMake's
 * find_package(gbs CONFIG REQUIRED) and target gbs::gbs. */
#ifndef GBS_HPP
#define GBS_HPP

#include <gbs.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gbs {

/* A failing call of libgbs: status() is the GBS_ERR_* code, what() the
 * library's message. */
class error : public std::runtime_error {
 public:
  error(int status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

namespace detail {

/* Throws gbs::error if status is not GBS_OK, taking ownership of err. */
inline void check(int status, char *err) {
  if (status == GBS_OK) {
    gbs_free_error(err);
    return;
  }
  std::string msg = err ? err : "gbs: status " + std::to_string(status);
  gbs_free_error(err);
  throw error(status, msg);
}

/* Copies and frees a NULL-terminated warning array. */
inline std::vector<std::string> take_warnings(char **warnings) {
  std::vector<std::string> out;
  for (char **w = warnings; w && *w; ++w) out.emplace_back(*w);
  gbs_free_warnings(warnings);
  return out;
}

}  // namespace detail

/* A read-only view of size doubles at data: from a pointer and a size, or
 * from any contiguous container of double. */
class doubles {
 public:
  doubles() = default;
  doubles(const double *data, std::size_t size) : data_(data), size_(size) {}
  template <class C, class = decltype(std::data(std::declval<const C &>())),
            class = std::enable_if_t<std::is_same_v<
                std::remove_cv_t<std::remove_pointer_t<decltype(std::data(
                    std::declval<const C &>()))>>,
                double>>>
  doubles(const C &c) : data_(std::data(c)), size_(std::size(c)) {}
  const double *data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  const double *data_ = nullptr;
  std::size_t size_ = 0;
};

/* gbs_evidence_options with size set and every option at its default. */
inline gbs_evidence_options evidence_options() {
  gbs_evidence_options o{};
  o.size = sizeof o;
  return o;
}

/* gbs_flow_options with size set and every option at its default. */
inline gbs_flow_options flow_options() {
  gbs_flow_options o{};
  o.size = sizeof o;
  return o;
}

/* One finding of a check (gbs_finding): branch on check and kind
 * (GBS_CHECK_*, GBS_KIND_*), never on message. */
struct finding {
  int check = 0, kind = 0;
  int64_t where = GBS_WHERE_NONE;
  double value = 0, limit = 0;
  std::string message;
};

/* The outcome of gbs::evidence: gbs_result's numbers, its warnings, info,
 * findings and the trace of ln Z against the number of proposal draws. */
struct result {
  double logz = 0, logzerr = 0;
  int64_t n_p = 0, n_q = 0, ncall = 0;
  double tau = 0, re2_p = 0, re2_q = 0;
  int method = 0;
  std::vector<std::string> warnings;  // the first n_sampler_warnings are about the draws
  int64_t n_sampler_warnings = 0;
  std::vector<std::string> info;  // facts that are not warnings (see gbs_result.info)
  std::vector<gbs_trace_point> trace;
  std::vector<finding> findings;     // every finding, warnings about the draws first
  gbs_diagnostics diagnostics{};      // the checks' numbers (frozen at ABI 3)
  gbs_diagnostics_ext diagnostics_ext{};  // and those beyond
};

namespace detail {

/* Copies the findings and numbers of report into out and frees it. */
inline void take_report(gbs_report *report, result &out) {
  char *err = nullptr;
  int64_t n = 0;
  int st = gbs_report_n_findings(report, &n, &err);
  for (int64_t i = 0; st == GBS_OK && i < n; ++i) {
    gbs_finding f{};
    f.size = sizeof f;
    st = gbs_report_finding(report, i, &f, &err);
    if (st == GBS_OK)
      out.findings.push_back({f.check, f.kind, f.where, f.value, f.limit, f.message});
  }
  if (st == GBS_OK) {
    out.diagnostics_ext.size = sizeof out.diagnostics_ext;
    st = gbs_report_diagnostics_ext(report, &out.diagnostics_ext, &err);
  }
  gbs_report_free(report, nullptr);
  check(st, err);
}

}  // namespace detail

namespace detail {

/* The callable behind the C callback, and the first exception it threw
 * (callbacks may run on several threads when opt.concurrent is set). */
template <class F>
struct callback_state {
  F &f;
  std::mutex mu;
  std::exception_ptr exc;

  static int call(const double *x, int64_t n, int64_t d, double *logp,
                  void *user) noexcept {
    auto *self = static_cast<callback_state *>(user);
    try {
      using R = decltype(self->f(x, n, d, logp));
      if constexpr (std::is_void_v<R>) {
        self->f(x, n, d, logp);
        return 0;
      } else {
        return static_cast<int>(self->f(x, n, d, logp));
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(self->mu);
      if (!self->exc) self->exc = std::current_exception();
      return -1;
    }
  }
};

}  // namespace detail

/* ln Z of the unnormalized density logp from draws of it (gbs_evidence).
 *
 * logp:     any callable (const double *x, int64_t n, int64_t d, double *out)
 *           writing log p of the n points x (row-major, n*d) into out; it
 *           returns void, or an int whose non-zero value aborts the call.
 *           An exception it throws aborts the call and is rethrown here.
 * samples:  n_chains * n_draws * d doubles, chain-major (see gbs.h).
 * d:        the dimension; samples.size() must be a multiple of n_chains*d.
 * opt:      options (gbs::evidence_options() for the defaults).
 * logp_samples: empty, or log p at the samples (then not evaluated again).
 * Throws gbs::error for a failing call, std::invalid_argument for shapes. */
template <class F>
result evidence(F &&logp, doubles samples, int64_t d,
                const gbs_evidence_options &opt = evidence_options(),
                int64_t n_chains = 1, doubles logp_samples = {}) {
  if (d < 1) throw std::invalid_argument("gbs::evidence: d = " + std::to_string(d) + " < 1");
  if (n_chains < 1)
    throw std::invalid_argument("gbs::evidence: n_chains = " + std::to_string(n_chains) + " < 1");
  const auto per_draw = static_cast<std::size_t>(d) * static_cast<std::size_t>(n_chains);
  if (samples.size() % per_draw != 0)
    throw std::invalid_argument("gbs::evidence: samples.size() = " + std::to_string(samples.size()) +
                                " is not a multiple of n_chains * d = " + std::to_string(per_draw));
  const auto n_draws = static_cast<int64_t>(samples.size() / per_draw);
  if (!logp_samples.empty() &&
      logp_samples.size() != static_cast<std::size_t>(n_chains * n_draws))
    throw std::invalid_argument("gbs::evidence: logp_samples.size() = " +
                                std::to_string(logp_samples.size()) + ", want n_chains * n_draws = " +
                                std::to_string(n_chains * n_draws));

  using Fn = std::remove_reference_t<F>;
  detail::callback_state<Fn> state{logp, {}, nullptr};
  gbs_result r{};
  r.size = sizeof r;
  std::vector<gbs_trace_point> trace(256);
  char *err = nullptr;
  int st = gbs_evidence(&detail::callback_state<Fn>::call, &state, samples.data(), n_chains,
                        n_draws, d, logp_samples.empty() ? nullptr : logp_samples.data(), &opt, &r,
                        trace.data(), static_cast<int64_t>(trace.size()), &err);
  if (state.exc) {
    gbs_free_error(err);
    std::rethrow_exception(state.exc);
  }
  detail::check(st, err);

  result out;
  out.logz = r.logz;
  out.logzerr = r.logzerr;
  out.n_p = r.n_p;
  out.n_q = r.n_q;
  out.ncall = r.ncall;
  out.diagnostics = r.diagnostics;
  out.tau = r.tau;
  out.re2_p = r.re2_p;
  out.re2_q = r.re2_q;
  out.method = r.method;
  out.warnings = detail::take_warnings(r.warnings);
  out.n_sampler_warnings = r.n_sampler_warnings;
  out.info = detail::take_warnings(r.info);
  detail::take_report(r.report, out);
  trace.resize(static_cast<std::size_t>(
      r.n_trace < static_cast<int64_t>(trace.size()) ? r.n_trace : static_cast<int64_t>(trace.size())));
  out.trace = std::move(trace);
  return out;
}

/* A fitted Gaussianizing flow (gbs_flow), freed when the object goes away.
 * Move-only. */
class flow {
 public:
  /* Fits a flow to the points x (n*d doubles); weights empty or n values. */
  static flow fit(doubles x, int64_t d, const gbs_flow_options &opt = flow_options(),
                  doubles weights = {}) {
    if (d < 1 || x.size() % static_cast<std::size_t>(d) != 0)
      throw std::invalid_argument("gbs::flow::fit: x.size() = " + std::to_string(x.size()) +
                                  " is not a multiple of d = " + std::to_string(d));
    const auto n = static_cast<int64_t>(x.size() / static_cast<std::size_t>(d));
    if (!weights.empty() && weights.size() != static_cast<std::size_t>(n))
      throw std::invalid_argument("gbs::flow::fit: weights.size() = " +
                                  std::to_string(weights.size()) + ", want " + std::to_string(n));
    gbs_flow *h = nullptr;
    char *err = nullptr;
    detail::check(gbs_flow_fit(x.data(), n, d, weights.empty() ? nullptr : weights.data(), &opt,
                               &h, &err),
                  err);
    return flow(h);
  }

  /* Reads a flow written by save(). */
  static flow load(const std::string &path) {
    gbs_flow *h = nullptr;
    char *err = nullptr;
    detail::check(gbs_flow_load(path.c_str(), &h, &err), err);
    return flow(h);
  }

  flow(flow &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  flow &operator=(flow &&o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  flow(const flow &) = delete;
  flow &operator=(const flow &) = delete;
  ~flow() { reset(); }

  /* The C handle, for the functions of gbs.h this layer does not wrap. */
  gbs_flow *handle() const noexcept { return h_; }

  gbs_flow_info info() const {
    gbs_flow_info i{};
    i.size = sizeof i;
    char *err = nullptr;
    detail::check(gbs_flow_get_info(h_, &i, &err), err);
    return i;
  }
  int64_t dim() const { return info().dim; }

  /* log q at the points x (a multiple of dim() doubles). */
  std::vector<double> log_prob(doubles x) const {
    const int64_t n = points(x, "log_prob");
    std::vector<double> out(static_cast<std::size_t>(n));
    char *err = nullptr;
    detail::check(gbs_flow_log_prob(h_, x.data(), n, out.data(), &err), err);
    return out;
  }

  /* n draws from q (n*dim() doubles, row-major), the same for the same seed. */
  std::vector<double> sample(int64_t n, uint64_t seed) const {
    if (n < 0) throw std::invalid_argument("gbs::flow::sample: n = " + std::to_string(n) + " < 0");
    std::vector<double> x(static_cast<std::size_t>(n * dim()));
    char *err = nullptr;
    detail::check(gbs_flow_sample(h_, n, seed, x.data(), nullptr, &err), err);
    return x;
  }

  void save(const std::string &path) const {
    char *err = nullptr;
    detail::check(gbs_flow_save(h_, path.c_str(), &err), err);
  }

 private:
  explicit flow(gbs_flow *h) noexcept : h_(h) {}

  void reset() noexcept {
    if (h_) {
      char *err = nullptr;
      gbs_flow_free(h_, &err);  // cannot fail for a live handle
      gbs_free_error(err);
      h_ = nullptr;
    }
  }

  int64_t points(doubles x, const char *what) const {
    const int64_t d = dim();
    if (x.size() % static_cast<std::size_t>(d) != 0)
      throw std::invalid_argument(std::string("gbs::flow::") + what + ": x.size() = " +
                                  std::to_string(x.size()) + " is not a multiple of dim() = " +
                                  std::to_string(d));
    return static_cast<int64_t>(x.size() / static_cast<std::size_t>(d));
  }

  gbs_flow *h_ = nullptr;
};

/* The version of the loaded library ("0.1.0"); GBS_VERSION_* of the header
 * it was built from. */
inline std::string version() { return gbs_version(); }

}  // namespace gbs

#endif /* GBS_HPP */
