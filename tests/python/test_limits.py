"""Sizes that cannot fit in memory are clear errors, and the process lives
on: libgbs checks every size that drives an allocation before allocating
(Go cannot recover from running out of memory), and the package checks
the output arrays it allocates itself. 10^12 values of 8 bytes are 8 TB,
more than any machine this runs on."""

import struct
import zlib

import numpy as np
import pytest
from targets import C, gauss_vec

import gbs


def counting(f):
    def g(x):
        g.calls += 1
        return f(x)
    g.calls = 0
    return g


@pytest.mark.parametrize("n_q", [10**12, 2**62])
@pytest.mark.parametrize("method", ["bridge", "is"])
def test_huge_n_q(n_q, method):
    x = np.random.default_rng(1).normal(size=(1000, 3))
    f = counting(gauss_vec)
    with pytest.raises(ValueError, match=r"n_q = %d proposal draws of dimension 3 need " % n_q):
        gbs.evidence(f, x, vectorize=True, n_q=n_q, method=method, seed=1, independent=True)
    assert f.calls == 0
    # The process lives on and the library still works.
    res = gbs.evidence(gauss_vec, x, vectorize=True, seed=1, independent=True)
    assert abs(res.logz - C) < 4 * res.logzerr


def test_n_q_beyond_int64():
    x = np.random.default_rng(1).normal(size=(1000, 2))
    for n_q in (2**63, 2**64, 2**70):
        with pytest.raises(ValueError, match="n_q = %d does not fit in the library's 64-bit integer" % n_q):
            gbs.evidence(gauss_vec, x, vectorize=True, n_q=n_q, seed=1)


def normal_grad(x):
    return -0.5 * float(x @ x), -x


def test_sample_huge_draws():
    # Either numpy refuses the output array or libgbs refuses the run;
    # both messages name the draws and what they need.
    with pytest.raises(ValueError, match=r"4 × 1000000000000 draws of dimension 2 need "):
        gbs.sample(normal_grad, np.zeros(2), n_draws=10**12, seed=1)


def test_sample_ensemble_huge_steps():
    with pytest.raises(ValueError, match=r"Walkers × Steps = 32 × 1000000000000 states of dimension 2 need "):
        gbs.sample_ensemble(lambda x: -0.5 * float(x @ x), ndim=2, steps=10**12, seed=1)


def test_flow_settings_and_sample_size():
    x = np.random.default_rng(2).normal(size=(400, 3))
    with pytest.raises(ValueError, match=r"Layers = 2000000000 layers of 3 directions .* need "):
        gbs.Flow.fit(x, layers=2 * 10**9, seed=1)
    with pytest.raises(ValueError, match=r"Knots = 2000000000 knots in each of 3 directions need "):
        gbs.Flow.fit(x, knots=2 * 10**9, seed=1)
    with pytest.raises(ValueError, match="layers = 4294967296 does not fit in the library's 32-bit integer"):
        gbs.Flow.fit(x, layers=2**32, seed=1)
    flow = gbs.Flow.fit(x, seed=1)
    with pytest.raises(ValueError, match=r"n = 1000000000000 draws of dimension 3 need "):
        flow.sample(10**12, seed=1)
    assert flow.sample(5, seed=1).shape == (5, 3)


def test_crafted_flow_file_with_many_warnings():
    # A checksum-valid file that declares 5 * 10^6 empty warnings (20 MB)
    # is refused instead of decoded into about 20 times its size.
    data = gbs.Flow.fit(np.random.default_rng(3).normal(size=(400, 2)), seed=1).to_bytes()
    assert data[-8:-4] == b"\0\0\0\0"  # no warnings
    n = 5 * 10**6
    body = data[:-8] + struct.pack("<I", n) + b"\0\0\0\0" * n
    crafted = body + struct.pack("<I", zlib.crc32(body))
    with pytest.raises(gbs.GbsError, match="5000000 warnings"):
        gbs.Flow.from_bytes(crafted)
