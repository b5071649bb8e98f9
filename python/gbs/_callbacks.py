"""Python functions as libgbs callbacks, and running a library call so that
exceptions in callbacks and Ctrl-C in the caller both end it cleanly.

How a call runs (see :func:`run`): the foreign call is made from a worker
thread, and the calling thread waits for it in short slices, so that it
receives KeyboardInterrupt (Python runs signal handlers only in the main
thread, and ctypes releases the GIL during the foreign call, so Go is free
to call back from its own threads). On KeyboardInterrupt the waiting thread

1. sets each callback's ``stop`` flag (a per-point loop stops at the next
   point, a pool stops waiting for its tasks),
2. raises KeyboardInterrupt asynchronously inside the user's function if a
   callback is running it at that moment (a long vectorized batch stops at
   its next bytecode, not at its end; as Ctrl-C would in the main thread),
3. cancels the Go call through its cancel token,

then waits for the call to return and re-raises KeyboardInterrupt. A
callback never lets an exception unwind into Go: it stores the first one
and returns non-zero, the library aborts the call with GBS_ERR_CALLBACK,
and :func:`run` re-raises the stored exception, traceback included.
"""

import ctypes
import threading

import numpy as np

from . import _lib
from ._values import batch_values, real_value

_f64 = np.float64
_c_double = ctypes.c_double


def _view(addr, n):
    """A numpy view of n doubles at the address addr (n >= 1)."""
    return np.frombuffer((_c_double * n).from_address(addr), dtype=_f64)


_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = [ctypes.c_ulong, ctypes.py_object]
_set_async_exc.restype = ctypes.c_int


class Callback:
    """State shared by the callback wrappers: the first exception, the stop
    flag, and which thread is inside the user's Python code."""

    def __init__(self):
        self.exc = None
        self.stop = threading.Event()
        self.calls = 0      # points evaluated
        self.batches = 0    # callback invocations
        self.progress = None
        self._active = None  # thread ident while user code runs

    def _fail(self, exc):
        if self.exc is None:
            self.exc = exc
        return 1

    def interrupt(self):
        """Called by the waiting thread on Ctrl-C (holding the GIL)."""
        self.stop.set()
        ident = self._active
        if ident is not None:
            # The target thread cannot run Python while we hold the GIL,
            # so it is still inside the try block below; the exception is
            # raised there at its next bytecode and stored as self.exc.
            _set_async_exc(ident, KeyboardInterrupt)


class BatchCallback(Callback):
    """``batch_fn(x, out)`` as a gbs_log_density_fn.

    The library's n points (an n*d row-major buffer valid only during the
    call) are copied into a fresh (n, d) array x, so that the user's
    function may keep or modify what it receives; batch_fn writes the n
    values of log p into out, a view of the library's output buffer.
    """

    def __init__(self, batch_fn, interruptible=True):
        super().__init__()
        self.batch_fn = batch_fn
        # False when batch_fn waits on a pool: it polls self.stop itself,
        # and an asynchronous exception inside the pool's locking code
        # could leave a lock held.
        self.interruptible = interruptible
        self.cfunc = _lib.LOG_DENSITY_FN(self)

    def __call__(self, x_addr, n, d, out_addr, _user):
        try:
            if self.stop.is_set():
                raise KeyboardInterrupt
            x = _view(x_addr, n * d).reshape(n, d).copy()
            out = _view(out_addr, n)
            if self.interruptible:
                self._active = threading.get_ident()
            self.batch_fn(x, out)
            self._active = None
            self.calls += n
            self.batches += 1
            if self.progress is not None:
                self.progress.update(n)
            return 0
        except BaseException as exc:  # KeyboardInterrupt and SystemExit too
            self._active = None
            return self._fail(exc)


class GradCallback(Callback):
    """``fn(x) -> (log p, gradient)`` at one point as a
    gbs_log_density_grad_fn."""

    def __init__(self, fn, name="log_prob_and_grad"):
        super().__init__()
        self.fn = fn
        self.name = name
        self.cfunc = _lib.LOG_DENSITY_GRAD_FN(self)

    def __call__(self, x_addr, d, logp_addr, grad_addr, _user):
        try:
            if self.stop.is_set():
                raise KeyboardInterrupt
            x = _view(x_addr, d).copy()
            self._active = threading.get_ident()
            ret = self.fn(x)
            self._active = None
            try:
                lp, g = ret
            except (TypeError, ValueError):
                raise TypeError("%s must return (log p, gradient), got %r"
                                % (self.name, type(ret).__name__)) from None
            if type(lp) is not float:
                lp = real_value(lp, x, self.name)
            g = _gradient(g, d, self.name, "at x = %s; it must be %d numbers", x, d)
            if g.size != d:
                raise ValueError("%s returned a gradient of shape %s at a point "
                                 "of dimension %d; it must have shape (%d,)" % (self.name, g.shape, d, d))
            _c_double.from_address(logp_addr).value = lp
            _view(grad_addr, d)[:] = g.reshape(d)
            self.calls += 1
            if self.progress is not None:
                self.progress.update(1)
            return 0
        except BaseException as exc:
            self._active = None
            return self._fail(exc)


class GradBatchCallback(Callback):
    """``fn(x) -> (log p, gradient)`` at n points, x of shape (n, d), log p
    of shape (n,) and the gradient (n, d), as a
    gbs_log_density_grad_batch_fn: the chains' current points in one call.
    """

    def __init__(self, fn, name="log_prob_and_grad", interruptible=True):
        super().__init__()
        self.fn = fn
        self.name = name
        # False when fn waits on a pool (see BatchCallback).
        self.interruptible = interruptible
        self.cfunc = _lib.LOG_DENSITY_GRAD_BATCH_FN(self)

    def __call__(self, x_addr, n, d, logp_addr, grad_addr, _user):
        try:
            if self.stop.is_set():
                raise KeyboardInterrupt
            x = _view(x_addr, n * d).reshape(n, d).copy()
            if self.interruptible:
                self._active = threading.get_ident()
            ret = self.fn(x)
            self._active = None
            try:
                lp, g = ret
            except (TypeError, ValueError):
                raise TypeError("log_prob_and_grad with vectorize=True must return (log p, gradient) "
                                "arrays, got %r" % (type(ret).__name__,)) from None
            if type(lp) is not np.ndarray or lp.dtype != _f64:
                lp = batch_values(lp, x, self.name)
            if lp.shape != (n,):
                raise ValueError("log_prob_and_grad with vectorize=True returned log p of shape %s for "
                                 "%d points; it must have shape (%d,)" % (lp.shape, n, n))
            g = _gradient(g, (n, d), self.name, "for a batch of %d points; it must be numbers", n)
            if g.shape != (n, d):
                raise ValueError("log_prob_and_grad with vectorize=True returned a gradient of shape %s "
                                 "for %d points of dimension %d; it must have shape (%d, %d)"
                                 % (g.shape, n, d, n, d))
            _view(logp_addr, n)[:] = lp
            _view(grad_addr, n * d).reshape(n, d)[:] = g
            self.calls += n
            self.batches += 1
            if self.progress is not None:
                self.progress.update(n)
            return 0
        except BaseException as exc:
            self._active = None
            return self._fail(exc)


def _gradient(g, shape, name, where, *args):
    """A callback's gradient as float64 numbers, NaN of ``shape`` for None
    (with log p = -inf outside the support the point is refused, and its
    gradient is never read); ``where % args`` ends the error message,
    formatted only on error (this runs at every point)."""
    if g is None:
        return np.full(shape, np.nan)
    if type(g) is not np.ndarray or g.dtype != _f64:
        g = np.asarray(g)
        if g.dtype.kind not in "fiu":
            raise TypeError("%s returned a gradient of dtype %s %s" % (name, g.dtype, where % args))
        g = g.astype(_f64)
    return g


def _reraise(exc):
    """Re-raise a callback's exception with its own traceback."""
    if hasattr(exc, "add_note") and not isinstance(exc, KeyboardInterrupt):
        note = "(raised in a callback of libgbs; the call was aborted)"
        if note not in getattr(exc, "__notes__", ()):
            exc.add_note(note)
    raise exc.with_traceback(exc.__traceback__)


def run(fn, callbacks=(), token=None, on_abandon=None):
    """Run ``fn() -> (status, err)`` (a foreign call) in a worker thread.

    Parameters
    ----------
    fn : callable
        Makes the ctypes call and returns (status, err).
    callbacks : sequence of Callback
        The Python callbacks the call may invoke.
    token : CancelToken, optional
        Cancels the call on Ctrl-C.
    on_abandon : callable, optional
        For calls without callbacks that cannot be cancelled (a flow fit):
        on Ctrl-C, raise KeyboardInterrupt at once and let the call finish
        in the background; ``on_abandon(status, err)`` then runs in the worker
        thread to release what the call produced.
    """
    outcome = {}
    done = threading.Event()
    lock = threading.Lock()
    abandoned = []

    def target():
        try:
            value = fn()
        except BaseException as exc:
            value = None
            outcome["exc"] = exc
        with lock:
            outcome["value"] = value
            done.set()
            late = bool(abandoned)
        if late and on_abandon is not None and value is not None:
            on_abandon(*value)

    worker = threading.Thread(target=target, name="gbs-call", daemon=True)
    worker.start()
    interrupted = None
    # Event.wait with a timeout, not Thread.join: a KeyboardInterrupt in a
    # join can leave the thread looking finished while it still runs.
    while not done.is_set():
        try:
            done.wait(0.05)
        except KeyboardInterrupt as exc:
            interrupted = exc
            for cb in callbacks:
                cb.interrupt()
            if token is not None:
                token.cancel()
            if on_abandon is not None:
                with lock:
                    if not done.is_set():
                        abandoned.append(True)
                        raise
    if "exc" in outcome:  # e.g. a ctypes ArgumentError
        raise outcome["exc"]
    status, err = outcome["value"]
    if interrupted is not None:
        _lib.take_error(err)
        raise interrupted
    if status == _lib.ERR_CALLBACK:
        for cb in callbacks:
            if cb.exc is not None:
                _lib.take_error(err)
                if isinstance(cb.exc, KeyboardInterrupt):
                    raise cb.exc
                _reraise(cb.exc)
    _lib.check(status, err)
