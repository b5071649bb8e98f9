"""Log densities in compiled code, which the library calls without Python:
:class:`NativeDensity`, and the library's own reference problems
(:func:`native_problem`, ``gbs.problems.<name>(d).native()``)."""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

import numpy as np

from . import _lib

__all__ = ["NativeDensity", "native_problem"]


def _address(fn: Any) -> int:
    """The address of a C function given as a ctypes function pointer, an
    object with an ``address`` (a numba cfunc) or an int."""
    if isinstance(fn, bool):
        raise TypeError("fn must be a C function pointer, not a bool")
    if isinstance(fn, int):
        addr = fn
    elif isinstance(fn, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        addr = ctypes.cast(fn, ctypes.c_void_p).value or 0
    elif isinstance(getattr(fn, "address", None), int):
        addr = fn.address
    else:
        raise TypeError("fn must be a ctypes function pointer, an object with an integer .address "
                        "(a numba cfunc) or an int address, not %r" % (type(fn).__name__,))
    if addr <= 0:
        raise ValueError("fn is a NULL function pointer")
    return addr


def _user_address(user: Any) -> Tuple[Optional[int], Any]:
    """(address, object to keep alive) of the user pointer."""
    if user is None:
        return None, None
    if isinstance(user, bool):
        raise TypeError("user must be a pointer, not a bool")
    if isinstance(user, int):
        return user, None
    if isinstance(user, ctypes.c_void_p):
        return user.value, user
    try:
        return ctypes.cast(user, ctypes.c_void_p).value, user
    except (TypeError, ctypes.ArgumentError):
        pass
    try:
        return ctypes.addressof(user), user
    except TypeError:
        raise TypeError("user must be None, an int address or a ctypes object (passed by address), not %r"
                        % (type(user).__name__,)) from None


class NativeDensity:
    """A log density with its gradient in compiled code, which the library
    calls directly: no Python runs per point.

    :func:`gbs.run` and :func:`gbs.sample` accept one in place of a Python
    ``log_prob_and_grad``. Use it when the per-call cost of Python matters
    (a cheap density and many gradient evaluations: about 10-40 us per
    call from the library into Python, against well under 1 us in C).

    Parameters
    ----------
    fn : ctypes function pointer, numba cfunc or int
        A C function of the header's type ``gbs_log_density_grad_fn``::

            int fn(const double *x, int64_t d, double *logp, double *grad, void *user)

        writing log p at the point x (d doubles) into ``*logp`` and its
        gradient into grad (d doubles), and returning 0. -inf marks a
        point outside the support. A non-zero return aborts the call with
        ``gbs.GbsCallbackError`` ("log-density callback returned error
        code N"). Given as a ctypes function pointer (``CFUNCTYPE`` or a
        function of a ``ctypes.CDLL``), an object with an integer
        ``address`` (a ``numba.cfunc``) or the function's address.
    dim : int
        The dimension d.
    user : None, int or ctypes object, optional
        Passed to fn untouched as its ``void *user``: an address, or a
        ctypes object (a structure, array or pointer), passed by address
        and kept alive as long as this object.
    thread_safe : bool, default False
        fn may be called from several threads at once: the chains then
        run in parallel (the draws are the same either way).
    bounds : array_like, optional
        The support's box, shape (d, 2) or a pair (lower, upper): the
        default ``bounds`` of :func:`gbs.run` with this density.
    name : str, optional
        Shown by ``repr``.

    Attributes
    ----------
    dim, thread_safe, bounds, name
        As given.
    address, user_address : int
        The function's and the user pointer's addresses (None for a NULL
        user pointer).

    Notes
    -----
    Calling the object, ``density(x)`` for x of shape (d,) or (n, d),
    evaluates fn from Python and returns ``(log p, gradient)``: a check of
    the compiled function, and a fallback for entry points that take only
    Python callables.
    """

    def __init__(self, fn: Any, dim: int, user: Any = None, *, thread_safe: bool = False,
                 bounds: Any = None, name: Optional[str] = None):
        if isinstance(dim, bool) or int(dim) != dim or dim < 1:
            raise ValueError("dim must be an integer >= 1, not %r" % (dim,))
        self.dim = int(dim)
        self.address = _address(fn)
        self.user_address, self._keep = _user_address(user)
        self._fn_ref = fn  # keeps a ctypes callback or a cfunc alive
        self._cfunc = _lib.LOG_DENSITY_GRAD_FN(self.address)
        self.thread_safe = bool(thread_safe)
        self.bounds = bounds
        self.name = name

    def __call__(self, x: Any) -> Tuple[Any, np.ndarray]:
        x = np.array(x, dtype=np.float64)
        one = x.ndim == 1
        pts = np.atleast_2d(x)
        if pts.ndim != 2 or pts.shape[1] != self.dim:
            raise ValueError("x must have shape (%d,) or (n, %d), not %s" % (self.dim, self.dim, x.shape))
        pts = np.ascontiguousarray(pts)
        lp = np.empty(len(pts))
        grad = np.empty(pts.shape)
        out = ctypes.c_double()
        for i in range(len(pts)):
            rc = self._cfunc(pts[i].ctypes.data, self.dim, ctypes.addressof(out), grad[i].ctypes.data,
                             self.user_address)
            if rc != 0:
                raise _lib.GbsCallbackError(_lib.ERR_CALLBACK, "log-density callback returned error code %d" % rc)
            lp[i] = out.value
        return (lp[0], grad[0]) if one else (lp, grad)

    def _pass(self) -> Tuple[Any, Optional[int]]:
        """The (function pointer, user pointer) arguments of a library call."""
        return self._cfunc, self.user_address

    def __repr__(self) -> str:
        label = self.name or "0x%x" % self.address
        return "NativeDensity(%s, dim=%d%s)" % (label, self.dim, ", thread_safe" if self.thread_safe else "")


class _NativeProblem(NativeDensity):
    """A reference problem of the library (a gbs_problem handle)."""

    def __init__(self, name: str):
        handle = ctypes.c_void_p()
        _lib.call(_lib.lib.gbs_problem_new, str(name).encode("utf-8"), ctypes.byref(handle))
        self._handle = handle
        d = ctypes.c_int64()
        logz = ctypes.c_double()
        _lib.call(_lib.lib.gbs_problem_dim, handle, ctypes.byref(d))
        _lib.call(_lib.lib.gbs_problem_log_z, handle, ctypes.byref(logz))
        lo, hi = np.empty(d.value), np.empty(d.value)
        bounded = ctypes.c_int32()
        dp = ctypes.POINTER(ctypes.c_double)
        _lib.call(_lib.lib.gbs_problem_bounds, handle, lo.ctypes.data_as(dp), hi.ctypes.data_as(dp),
                  ctypes.byref(bounded))
        box = (lo, hi) if bounded.value else None
        fn = _lib.function_address("gbs_problem_log_density_grad")
        super().__init__(fn, d.value, handle.value, thread_safe=True, bounds=box, name=str(name))
        #: Exact ln Z of the problem.
        self.logz = logz.value

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and _lib.lib is not None and not _lib.forked():
            _lib.lib.gbs_problem_free(handle, None)
            self._handle = ctypes.c_void_p()


def native_problem(name: str) -> NativeDensity:
    """The library's reference problem ``name`` (as ``gbs.problems.by_name``
    names them: "funnel", "funnel-<d>", "cauchy-<d>", "ring-<d>",
    "gaussian-<d>", "mixture-<d>", "banana-<d>", ...) as a
    :class:`NativeDensity`, evaluated in the library (Go package
    problems), thread-safe, with its prior box as ``bounds`` and its exact
    ln Z as ``logz``.

    Raises
    ------
    gbs.GbsArgumentError
        An unknown name (the message lists the known forms) or a
        dimension out of its family's range.
    """
    return _NativeProblem(name)


def prepare(density: NativeDensity, x0: Any, bounds: Any, vectorize: bool, pool: Any, args: Any,
            kwargs: Any) -> Any:
    """Checks the arguments of gbs.run / gbs.sample that a native density
    cannot use, and returns the bounds to use (the density's by default)."""
    if x0 is not None and np.ndim(x0) >= 1 and np.shape(x0)[-1] != density.dim:
        raise ValueError("%s has dimension %d, but x0 has shape %s" % (density, density.dim, np.shape(x0)))
    unused = [k for k, v in (("vectorize", vectorize), ("pool", pool is not None), ("args", bool(args)),
                             ("kwargs", bool(kwargs))) if v]
    if unused:
        raise ValueError("%s: the library calls a NativeDensity itself, one point at a time; %s do not apply"
                         % (density, ", ".join(unused)))
    return density.bounds if bounds is None else bounds


def configure(density: NativeDensity, opt: Any, d: int) -> None:
    """Checks the run's dimension and lets a thread-safe density run the
    chains in parallel."""
    if d != density.dim:
        raise ValueError("%s has dimension %d, but x0 or bounds give d = %d" % (density, density.dim, d))
    if density.thread_safe:
        opt.concurrent = 1
