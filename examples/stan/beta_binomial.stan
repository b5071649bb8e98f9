// k ~ Binomial(n, p), p ~ Beta(a, b): a parameter in (0, 1).
data {
  int<lower=0> n;
  int<lower=0, upper=n> k;
  real<lower=0> a;
  real<lower=0> b;
}
parameters {
  real<lower=0, upper=1> p;
}
model {
  target += beta_lpdf(p | a, b);
  target += binomial_lpmf(k | n, p);
}
