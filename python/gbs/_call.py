"""Running a libgbs call with Python callbacks: exceptions inside callbacks
and Ctrl-C in the caller both end the Go call cleanly."""

import ctypes
import threading

import numpy as np

from ._lib import ERR_CALLBACK, ERR_CANCELED, CancelToken, GbsError, check


class CallbackBox:
    """Wraps a Python function as a batch log-density callback.

    The C side passes n points of dimension d; they are viewed as an (n, d)
    numpy array without copying. The first exception raised inside the
    function is kept and the callback returns non-zero, which aborts the Go
    call; the caller re-raises the exception afterwards.
    """

    def __init__(self, batch_fn):
        self.batch_fn = batch_fn
        self.exc = None
        self.calls = 0
        # Set on Ctrl-C: per-point loops stop at the next point instead of
        # finishing a batch that may take minutes.
        self.stop = threading.Event()

    def __call__(self, x_ptr, n, d, out_ptr, _user):
        try:
            x = np.ctypeslib.as_array(x_ptr, shape=(n, d))
            out = np.ctypeslib.as_array(out_ptr, shape=(n,))
            values = np.asarray(self.batch_fn(x), dtype=np.float64)
            if values.shape != (n,):
                raise ValueError(
                    "log_prob returned shape %s for %d points, expected (%d,)"
                    % (values.shape, n, n))
            out[:] = values
            self.calls += n
            return 0
        except BaseException as exc:  # KeyboardInterrupt too
            if self.exc is None:
                self.exc = exc
            return 1


def run(fn, boxes=(), token=None):
    """Run fn (a ctypes call returning (status, err)) in a worker thread.

    The main thread waits in short slices so that KeyboardInterrupt reaches
    it; it then cancels the Go call through token and waits for it to end.
    """
    outcome = {}
    done = threading.Event()

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as exc:
            outcome["exc"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=target, name="gbs-call", daemon=True)
    worker.start()
    interrupted = None
    # An Event, not Thread.join: a join interrupted by KeyboardInterrupt can
    # leave the thread looking finished while it still runs.
    while not done.is_set():
        try:
            done.wait(0.05)
        except KeyboardInterrupt as exc:
            interrupted = exc
            for box in boxes:
                box.stop.set()
            if token is not None:
                token.cancel()
    if "exc" in outcome:
        raise outcome["exc"]
    status, err = outcome["value"]
    if interrupted is not None and status in (ERR_CANCELED, ERR_CALLBACK, 0):
        ctypes_free(err)
        raise interrupted
    for box in boxes:
        if box.exc is not None and status == ERR_CALLBACK:
            ctypes_free(err)
            raise box.exc
    check(status, err)


def ctypes_free(err):
    from ._lib import lib
    if err:
        lib.gbs_free_error(err)


def new_token():
    return CancelToken()


__all__ = ["CallbackBox", "run", "new_token", "GbsError"]
