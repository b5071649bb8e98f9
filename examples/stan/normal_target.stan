// The conjugate normal model: y_i ~ N(mu, 1), mu ~ N(0, 2^2).
data {
  int<lower=0> N;
  vector[N] y;
}
parameters {
  real mu;
}
model {
  target += normal_lpdf(mu | 0, 2);
  target += normal_lpdf(y | mu, 1);
}
