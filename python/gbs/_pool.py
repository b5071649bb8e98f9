"""Evaluating the log density of a batch of points in parallel through a
user's pool: a multiprocessing pool, a concurrent.futures executor, a
dask.distributed Client, or any object with ``map``.

A batch is cut into chunks (a few per worker); each task evaluates one
chunk, point by point or vectorized as the user declared, so the values
are exactly those of a serial evaluation. Waiting for the tasks polls the
caller's stop flag, so Ctrl-C is not stuck behind a blocking ``map``.
"""

import concurrent.futures
import os
import time
import warnings

import numpy as np

from ._values import batch_values, callback_name, real_value, scalar_value

_POLL = 0.05  # seconds


class Task:
    """One chunk of points through the user's log_prob; picklable when
    log_prob, args and kwargs are (define log_prob at module level for
    spawn or forkserver pools; dask pickles closures too). With ``grad``
    the function is a log_prob_and_grad and a task returns (log p,
    gradients), shapes (m,) and (m, d)."""

    def __init__(self, log_prob, args, kwargs, vectorize, grad=False):
        self.log_prob, self.args, self.kwargs = log_prob, tuple(args), dict(kwargs)
        self.vectorize = vectorize
        self.grad = grad
        self.name = callback_name("log_prob_and_grad" if grad else "log_prob", log_prob)

    def __call__(self, x):
        if self.grad:
            return self._with_grad(x)
        if self.vectorize:
            return batch_values(self.log_prob(x, *self.args, **self.kwargs), x, self.name)
        out = np.empty(len(x))
        for i, row in enumerate(x):
            out[i] = scalar_value(self.log_prob(row, *self.args, **self.kwargs), row, self.name)
        return out

    def _with_grad(self, x):
        if self.vectorize:
            lp, g = _pair(self.log_prob(x, *self.args, **self.kwargs), self.name)
            return batch_values(lp, x, self.name), np.asarray(g, dtype=np.float64).reshape(x.shape)
        out, grad = np.empty(len(x)), np.empty(x.shape)
        for i, row in enumerate(x):
            lp, g = _pair(self.log_prob(row, *self.args, **self.kwargs), self.name)
            out[i] = real_value(lp, row, self.name)
            grad[i] = np.asarray(g, dtype=np.float64).reshape(x.shape[1])
        return out, grad


def _pair(ret, name):
    """A log_prob_and_grad's (log p, gradient), or a TypeError naming it."""
    try:
        lp, g = ret
    except (TypeError, ValueError):
        raise TypeError("%s must return (log p, gradient), got %r" % (name, type(ret).__name__)) from None
    return lp, g


def _start_method(pool):
    ctx = getattr(pool, "_ctx", None) or getattr(pool, "_mp_context", None)
    if ctx is not None and hasattr(ctx, "get_start_method"):
        try:
            return ctx.get_start_method()
        except Exception:
            return None
    return None


def _workers(pool):
    for attr in ("_processes", "_max_workers"):
        n = getattr(pool, attr, None)
        if isinstance(n, int) and n > 0:
            return n
    nthreads = getattr(pool, "nthreads", None)  # dask Client
    if callable(nthreads):
        try:
            return max(1, int(sum(nthreads().values())))
        except Exception:
            pass
    return os.cpu_count() or 1


def _is_dask_client(pool):
    return all(hasattr(pool, a) for a in ("gather", "submit", "scheduler_info"))


class PoolEvaluator:
    """``(x, out, stop)``: log p of the (n, d) points x into out, through
    pool; raises KeyboardInterrupt soon after stop is set."""

    def __init__(self, pool, log_prob, args, kwargs, vectorize, grad=False):
        if not hasattr(pool, "map") and not hasattr(pool, "submit"):
            raise TypeError("pool must have a map method (a multiprocessing pool, a "
                            "concurrent.futures executor or a dask.distributed Client), "
                            "not %r" % (type(pool).__name__,))
        if _start_method(pool) == "fork":
            warnings.warn(
                "gbs: the pool uses the 'fork' start method; a forked process hangs "
                "if it calls into libgbs (its Go runtime does not survive fork). Use "
                "multiprocessing.get_context('spawn') or 'forkserver'.",
                RuntimeWarning, stacklevel=4)
        self.pool = pool
        self.task = Task(log_prob, args, kwargs, vectorize, grad)
        self.chunks = 4 * _workers(pool)
        if _is_dask_client(pool):
            self._run = self._dask
        elif hasattr(pool, "map_async"):
            self._run = self._multiprocessing
        elif isinstance(pool, concurrent.futures.Executor) or (
                hasattr(pool, "submit") and not hasattr(pool, "map")):
            self._run = self._executor
        else:
            self._run = self._map

    def __call__(self, x, out, stop, grad=None):
        """log p of the points x into out (and with a grad task, their
        gradients into grad, shape (n, d))."""
        parts = np.array_split(x, min(len(x), self.chunks))
        results = self._run(parts, stop)
        i = 0
        for part, values in zip(parts, results):
            if grad is not None:
                values, g = values
                grad[i:i + len(part)] = g
            values = np.asarray(values, dtype=np.float64).reshape(-1)
            if len(values) != len(part):
                raise ValueError("the pool returned %d values for %d points" % (len(values), len(part)))
            out[i:i + len(part)] = values
            i += len(part)
        if i != len(x):
            raise ValueError("the pool returned values for %d of %d points" % (i, len(x)))

    def _multiprocessing(self, parts, stop):
        res = self.pool.map_async(self.task, parts, chunksize=1)
        while not res.ready():
            if stop.is_set():
                raise KeyboardInterrupt
            res.wait(_POLL)
        return res.get()  # re-raises a task's exception

    def _executor(self, parts, stop):
        futures = [self.pool.submit(self.task, p) for p in parts]
        try:
            pending = set(futures)
            while pending:
                if stop.is_set():
                    raise KeyboardInterrupt
                _, pending = concurrent.futures.wait(
                    pending, timeout=_POLL, return_when=concurrent.futures.FIRST_EXCEPTION)
                for f in futures:
                    if f.done() and f.exception() is not None:
                        raise f.exception()
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()

    def _dask(self, parts, stop):
        futures = self.pool.map(self.task, parts, pure=False)
        try:
            while not all(f.done() for f in futures):
                if stop.is_set():
                    raise KeyboardInterrupt
                time.sleep(_POLL / 5)
                for f in futures:
                    if f.status == "error":
                        f.result()  # raises the task's exception
            return self.pool.gather(futures)
        except BaseException:
            try:
                self.pool.cancel(futures)
            except Exception:
                pass
            raise

    def _map(self, parts, stop):
        results = list(self.pool.map(self.task, parts))
        # Some map methods return futures (e.g. a dask Client used through
        # a wrapper): wait for them.
        return [r.result() if hasattr(r, "result") and callable(r.result) else r for r in results]
