"""Serial, vectorized and pooled evaluation give the same ln Z for the same
seed."""

import concurrent.futures
import multiprocessing as mp

import numpy as np
import pytest
import targets
from targets import Boom, gauss, gauss_vec

import gbs

X = np.random.default_rng(2).normal(size=(3000, 4))


@pytest.fixture(scope="module")
def reference():
    serial = gbs.evidence(gauss, X, seed=5)
    vectorized = gbs.evidence(gauss_vec, X, vectorize=True, seed=5)
    return serial, vectorized


def same(a, b):
    return (a.logz, a.logzerr, a.n_q, a.ncall) == (b.logz, b.logzerr, b.n_q, b.ncall)


def test_vectorize_true_and_false_agree(reference):
    serial, vectorized = reference
    assert abs(serial.logz - targets.C) < 4 * serial.logzerr
    # gauss and gauss_vec do the same floating point operations per point.
    assert same(serial, vectorized)


def test_spawn_pool(reference):
    serial, vectorized = reference
    with mp.get_context("spawn").Pool(2) as pool:
        a = gbs.evidence(gauss, X, seed=5, pool=pool)
        b = gbs.evidence(gauss_vec, X, vectorize=True, seed=5, pool=pool)
        with pytest.raises(Boom, match="bad point"):
            gbs.evidence(targets.explode, X, pool=pool)
    assert same(a, serial) and same(b, vectorized)


def test_executors(reference):
    serial, vectorized = reference
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        assert same(gbs.evidence(gauss, X, seed=5, pool=ex), serial)
        with pytest.raises(Boom):
            gbs.evidence(targets.explode, X, pool=ex)
    ctx = mp.get_context("forkserver")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        assert same(gbs.evidence(gauss_vec, X, vectorize=True, seed=5, pool=ex), vectorized)


def test_object_with_map_only(reference):
    serial, _ = reference

    class Mapper:
        def __init__(self):
            self.tasks = 0

        def map(self, fn, items):
            items = list(items)
            self.tasks += len(items)
            return map(fn, items)

    m = Mapper()
    assert same(gbs.evidence(gauss, X, seed=5, pool=m), serial)
    assert m.tasks > 0


def test_dask_local_cluster(reference):
    distributed = pytest.importorskip("dask.distributed")
    serial, vectorized = reference
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        a = gbs.evidence(gauss_vec, X, vectorize=True, seed=5, pool=client)
        b = gbs.evidence(gauss, X, seed=5, pool=client)
        # A closure: dask pickles it with cloudpickle.
        shift = 0.0
        c = gbs.evidence(lambda v: gauss(v + shift), X, seed=5, pool=client)
        with pytest.raises(Boom):
            gbs.evidence(targets.explode, X, pool=client)
    assert same(a, vectorized) and same(b, serial) and same(c, serial)


def test_fork_pool_warns():
    with mp.get_context("fork").Pool(1) as pool:
        with pytest.warns(RuntimeWarning, match="fork"):
            res = gbs.evidence(gauss_vec, X[:1000], vectorize=True, seed=1, pool=pool)
    assert np.isfinite(res.logz)
