// Eight schools, non-centered: theta_j = mu + tau * theta_tilde_j.
data {
  int<lower=0> J;
  vector[J] y;
  vector<lower=0>[J] sigma;
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[J] theta_tilde;
}
model {
  target += normal_lpdf(mu | 0, 5);
  // A half-Cauchy: on tau > 0 its density is twice the Cauchy's.
  target += cauchy_lpdf(tau | 0, 5) + log(2);
  target += std_normal_lpdf(theta_tilde);
  target += normal_lpdf(y | mu + tau * theta_tilde, sigma);
}
