"""The Stan program rewriter of gbs.from_stan (no compiler needed): `~`
statements of many shapes become `target +=` with the right suffix, and
nothing else changes; comments and strings are left alone; truncations,
unknown distributions and includes raise an error showing the fix."""

import os
import shutil
import subprocess

import pytest

import stan_models
from gbs.adapters._stan_program import (CONTINUOUS, DISCRETE, StanProgramError, parameter_names,
                                        rewrite, tokenize)


def model(body, functions=""):
    fn = "functions {\n%s\n}\n" % functions if functions else ""
    return fn + "parameters {\n  real mu;\n}\nmodel {\n%s\n}\n" % body


@pytest.mark.parametrize("statement,expected", [
    ("y ~ normal(mu, 1);", "target += normal_lpdf(y | mu, 1);"),
    ("y~normal(mu,1);", "target += normal_lpdf(y | mu,1);"),
    ("k ~ poisson(lambda);", "target += poisson_lpmf(k | lambda);"),
    ("k ~ binomial_logit(n, alpha + x * beta);", "target += binomial_logit_lpmf(k | n, alpha + x * beta);"),
    ("z ~ std_normal();", "target += std_normal_lpdf(z);"),
    ("z ~ std_normal( );", "target += std_normal_lpdf(z);"),
    ("y[i] ~ normal(mu[g[i]], sigma);", "target += normal_lpdf(y[i] | mu[g[i]], sigma);"),
    ("y[1:N] ~ student_t(nu, f(x, {1, 2}), s);", "target += student_t_lpdf(y[1:N] | nu, f(x, {1, 2}), s);"),
    ("(y - mu) / sigma ~ normal(0, 1);", "target += normal_lpdf((y - mu) / sigma | 0, 1);"),
    ("to_vector(Y) ~ multi_normal_cholesky(m, L);", "target += multi_normal_cholesky_lpdf(to_vector(Y) | m, L);"),
    ("L ~ lkj_corr_cholesky(2.0);", "target += lkj_corr_cholesky_lpdf(L | 2.0);"),
    ("theta ~ dirichlet(rep_vector(1, K));", "target += dirichlet_lpdf(theta | rep_vector(1, K));"),
    ("c ~ categorical_logit(eta');", "target += categorical_logit_lpmf(c | eta');"),
    ("y ~ ordered_logistic(x * b, cut);", "target += ordered_logistic_lpmf(y | x * b, cut);"),
    ("y ~ normal(mu, 1e-3 * .5 + 2.i);", "target += normal_lpdf(y | mu, 1e-3 * .5 + 2.i);"),
    ("y ~ normal(a ? b : c, s);", "target += normal_lpdf(y | a ? b : c, s);"),
    ("y ~ normal(mu, sigma) ;", "target += normal_lpdf(y | mu, sigma);"),
])
def test_statement_shapes(statement, expected):
    r = rewrite(model("  " + statement))
    assert r.code == model("  " + expected)
    assert r.changed and len(r.statements) == 1
    assert r.statements[0][2] == expected


def test_layout_comments_and_strings_are_kept():
    body = """  // y ~ normal(0, 1) in a line comment
  /* and mu ~ normal(0, 1);
     in a block comment */
  print("mu ~ normal(0, 1)");   # an old-style comment ~
  mu ~ normal(0,  // a comment inside the statement
              10 /* another */);  // after it
  target += normal_lpdf(y | mu, 1);"""
    r = rewrite(model(body))
    assert r.code == model(body.replace(
        "mu ~ normal(0,  // a comment", "target += normal_lpdf(mu | 0,  // a comment"))
    assert [s[0] for s in r.statements] == [9]  # its line in the program
    assert r.statements[0][1] == "mu ~ normal(0, // a comment inside the statement 10 /* another */);"


def test_nested_statements():
    body = """  for (i in 1:N)
    y[i] ~ normal(mu, 1);
  for (i in 1:N) {
    if (g[i] == 1) z[i] ~ normal(0, 1);
    else if (g[i] == 2) z[i] ~ cauchy(0, 1);
    else {
      while (k < 3) { k += 1; w ~ gamma(2, 2); }
    }
  }
  profile("likelihood") {
    x ~ poisson_log(eta);
  }
  {
    real s = 2;
    v ~ exponential(s);
  }"""
    r = rewrite(model(body))
    assert [s[2] for s in r.statements] == [
        "target += normal_lpdf(y[i] | mu, 1);", "target += normal_lpdf(z[i] | 0, 1);",
        "target += cauchy_lpdf(z[i] | 0, 1);", "target += gamma_lpdf(w | 2, 2);",
        "target += poisson_log_lpmf(x | eta);", "target += exponential_lpdf(v | s);"]
    assert "~" not in r.code.split("model {")[1]
    assert "for (i in 1:N)\n    target += normal_lpdf(y[i] | mu, 1);" in r.code


def test_user_defined_distributions():
    functions = """  real skewed_lpdf(real y, real a) { return normal_lpdf(y | a, 1); }
  real counts_lpmf(int k, real l);
  real counts_lpmf(int k, real l) { return poisson_lpmf(k | l); }
  real prior_lp(real m) {
    m ~ normal(0, 1);
    target += std_normal_lupdf(m);
    return m;
  }
  real kernel_lpdf(real y, real m) { return normal_lupdf(y | m, 1); }"""
    body = "  y ~ skewed(mu);\n  k ~ counts(exp(mu));\n  target += skewed_lupdf(y | mu);"
    r = rewrite(model(body, functions))
    assert "target += skewed_lpdf(y | mu);" in r.code
    assert "target += counts_lpmf(k | exp(mu));" in r.code
    assert "target += counts_lpmf(k | exp(mu));\n  target += skewed_lpdf(y | mu);" in r.code
    # An _lp function's `~` and _lupdf add to target: rewritten too.
    assert "    target += normal_lpdf(m | 0, 1);\n    target += std_normal_lpdf(m);" in r.code
    # Inside an _lpdf function, _lupdf follows its caller (now _lpdf): left alone.
    assert "return normal_lupdf(y | m, 1);" in r.code
    assert [c[1:] for c in r.calls] == [("std_normal_lupdf", "std_normal_lpdf"),
                                        ("skewed_lupdf", "skewed_lpdf")]


def test_program_without_tilde_is_unchanged():
    code = stan_models.program("eight_schools")
    r = rewrite(code)
    assert r.code == code and not r.changed
    assert parameter_names(code) == ["mu", "tau", "theta_tilde"]


def test_normal_target_is_the_rewrite_of_normal():
    """The tests and the notebook rely on it: the rewritten program's
    build is the one httpstan already has for normal_target.stan."""
    assert rewrite(stan_models.program("normal")).code == stan_models.program("normal_target")


@pytest.mark.parametrize("statement,fix", [
    ("y ~ normal(mu, s) T[0, ];", "target += normal_lpdf(y | mu, s) - normal_lccdf(0 | mu, s);"),
    ("y ~ normal(mu, s) T[, U];", "target += normal_lpdf(y | mu, s) - normal_lcdf(U | mu, s);"),
    ("y ~ normal(mu, s) T[L, U];", "target += normal_lpdf(y | mu, s) - "
                                   "log_diff_exp(normal_lcdf(U | mu, s), normal_lcdf(L | mu, s));"),
    # A discrete family's lower bound is included: the mass below is up to L - 1.
    ("k ~ poisson(l) T[1, ];", "target += poisson_lpmf(k | l) - poisson_lccdf(0 | l);"),
    ("k ~ poisson(l) T[L, 10];", "target += poisson_lpmf(k | l) - "
                                 "log_diff_exp(poisson_lcdf(10 | l), poisson_lcdf(L - 1 | l));"),
])
def test_truncation_is_refused_with_its_fix(statement, fix):
    with pytest.raises(StanProgramError) as err:
        rewrite(model("  mu ~ normal(0, 1);\n  " + statement))
    msg = str(err.value)
    assert "line 6: %s" % statement in msg and fix in msg and "truncat" in msg
    assert err.value.statements == [(6, statement, fix)]


def test_unknown_distribution_is_refused_with_both_forms():
    with pytest.raises(StanProgramError) as err:
        rewrite(model("  y ~ mystery(mu, 2);\n  z ~ normal(0, 1) T[0, ];"))
    msg = str(err.value)
    assert "line 5: y ~ mystery(mu, 2);" in msg and "line 6: z ~ normal(0, 1) T[0, ];" in msg
    assert "target += mystery_lpdf(y | mu, 2);" in msg and "target += mystery_lpmf(y | mu, 2);" in msg
    assert "built-in distributions" in msg
    # Defined both ways in the functions block: ambiguous too.
    functions = ("  real both_lpdf(real y) { return -y^2; }\n"
                 "  real both_lpmf(int y) { return -y^2; }")
    with pytest.raises(StanProgramError, match="both as both_lpdf and both_lpmf"):
        rewrite(model("  y ~ both();", functions))


def test_include_is_refused():
    with pytest.raises(StanProgramError, match=r"#include .*paste its text"):
        rewrite("#include my_functions.stan\n" + model("  y ~ normal(0, 1);"))


@pytest.mark.parametrize("code,match", [
    ("model { y ~ normal(0, 1); ", "never closed"),
    ("model { y ~ normal(0, 1) }", "no ';'"),
    ("model { /* y ~ normal(0, 1); }", "never closed"),
    ("modle { }", "blocks"),
    ("model { y ~ 3; }", "cannot read the `~` statement"),
    ("model { y ~ normal(0, 1) + 2; }", "cannot read the `~` statement"),
    ("model { y ~ normal(0, 1) @; }", "character"),
])
def test_unreadable_programs(code, match):
    with pytest.raises(StanProgramError, match=match):
        rewrite(code)


def test_parameter_declarations():
    code = """parameters {
  real mu;
  real<lower=0> sigma;
  vector<lower=-1, upper=(a < b ? 1 : 2)>[N] s;   // a comment; with a semicolon
  array[J] real<lower=0> t;
  real old[3];
  cholesky_factor_corr[K] L;
  vector<offset=mu, multiplier=sigma>[J] theta;
  tuple(real, vector[2]) tp;
}
transformed parameters { real r = mu; }
model { }"""
    assert parameter_names(code) == ["mu", "sigma", "s", "t", "old", "L", "theta", "tp"]


def test_tokens():
    toks = [t.text for t in tokenize('a.*=b ./ c || d; "x ~ y" // ~\n 1.5e-3i')]
    assert toks == ["a", ".*=", "b", "./", "c", "||", "d", ";", '"x ~ y"', "1.5e-3i"]


def _stanc():
    try:
        import httpstan
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(httpstan.__file__), "stanc")
    return path if os.access(path, os.X_OK) else shutil.which("stanc")


def test_distribution_tables_match_stanc():
    """Every distribution of the stanc PyStan ships is in the tables, with
    the suffix stanc gives it (the tables may know newer ones)."""
    stanc = _stanc()
    if stanc is None:
        pytest.skip("no stanc (PyStan not installed)")
    out = subprocess.run([stanc, "--dump-stan-math-distributions"], capture_output=True,
                         text=True, check=True).stdout
    seen = 0
    for line in out.splitlines():
        name, _, kinds = line.partition(":")
        kinds = {k.strip() for k in kinds.split(",")}
        if "lpmf" in kinds:
            assert name in DISCRETE and name not in CONTINUOUS, name
            seen += 1
        elif "lpdf" in kinds:
            assert name in CONTINUOUS and name not in DISCRETE, name
            seen += 1
    assert seen > 60


def test_constant_check():
    """The rewritten density may differ from the program's by one constant
    only (to rounding); a spread means the draws are not the rewritten
    model's, and is an error showing the statements."""
    import numpy as np
    from gbs.adapters.stan import CONSTANT_ATOL, _check_constant
    rw = rewrite(model("  if (mu > 0) y ~ normal(mu, 1); else y ~ student_t(3, mu, 1);"))
    rng = np.random.default_rng(0)
    old = rng.normal(-1e4, 50, size=(4, 100))
    c = _check_constant(old - 19.99 + rng.uniform(-1, 1, old.shape) * 0.5 * CONSTANT_ATOL, old, rw)
    assert c == pytest.approx(-19.99, abs=1e-6)
    branch = old - np.where(old > -1e4, 18.4, 19.99)  # two constants, one per branch
    with pytest.raises(StanProgramError, match=r"varies by 1.59 nats(.|\n)*line 5: y ~ normal\(mu, 1\);") as err:
        _check_constant(branch, old, rw)
    assert "target += student_t_lpdf(y | 3, mu, 1);" in str(err.value)


def test_pystan_call_inside_a_running_event_loop_says_what_to_do():
    """As in Jupyter without nest_asyncio: a clear error with the fix."""
    import asyncio
    from gbs.adapters.stan import _run
    if getattr(asyncio, "_nest_patched", False):
        pytest.skip("nest_asyncio is applied in this process")

    async def inside():
        return _run(lambda: 1)

    with pytest.raises(RuntimeError, match=r"nest_asyncio.apply\(\)"):
        asyncio.run(inside())
    assert _run(lambda: 1) == 1
