// y_i ~ Poisson(lambda), lambda ~ Gamma(alpha, rate beta): a parameter > 0.
data {
  int<lower=0> N;
  array[N] int<lower=0> y;
  real<lower=0> alpha;
  real<lower=0> beta;
}
parameters {
  real<lower=0> lambda;
}
model {
  target += gamma_lpdf(lambda | alpha, beta);
  target += poisson_lpmf(y | lambda);
}
