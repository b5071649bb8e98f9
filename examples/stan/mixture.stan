// Two normal components of unit scale and equal weights with unknown
// means: the posterior is invariant under exchanging mu[1] and mu[2].
data {
  int<lower=1> N;
  vector[N] y;
}
parameters {
  vector[2] mu;
}
model {
  target += normal_lpdf(mu | 0, 5);
  for (n in 1:N)
    target += log_mix(0.5, normal_lpdf(y[n] | mu[1], 1), normal_lpdf(y[n] | mu[2], 1));
}
