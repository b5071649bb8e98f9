"""gbs.Flow: the Gaussianizing normalizing flow, usable on its own."""

from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, List, Literal, Optional, Tuple, Union, overload

import numpy as np

from . import _lib
from ._arrays import as_c, bounds_arrays, positive_int, ptr, seed_value
from ._callbacks import run
from ._memory import empty

_WHITEN = {"cholesky": 0, "pca": 1, "none": 2}
_ROTATION = {"max-sliced": 0, "random": 1}
_CONDITIONAL = {True: 0, False: 1}
_SCALE = {True: 0, False: 1}


class Flow:
    """A normalized density q fitted to samples by iterative
    Gaussianization: a whitening map, then layers that each either choose
    directions along which the data are least Gaussian and Gaussianize them
    with monotone splines (sliced layers), or map half of the coordinates
    with splines whose shape depends on the other half (conditional
    layers), whichever fits held-out points better. ``log_prob``
    integrates to one.

    Create one with :meth:`Flow.fit` or :meth:`Flow.load`; then
    :meth:`log_prob`, :meth:`sample`, :meth:`forward`, :meth:`inverse`,
    :meth:`save`. A flow is immutable and may be used from several threads;
    it pickles (as its serialized bytes).

    Attributes
    ----------
    dim : int
        Dimension d.
    layers : int
        Gaussianizing layers after the whitening.
    conditional_layers : int
        How many of them are conditional.
    """

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self._handle: Optional[ctypes.c_void_p] = handle
        info = _lib.new_struct(_lib.FlowInfo)
        _lib.call(_lib.lib.gbs_flow_get_info, self._handle, ctypes.byref(info))
        self.dim, self.layers = int(info.dim), int(info.layers)
        self.conditional_layers = int(info.conditional_layers)

    @classmethod
    def fit(cls, samples: Any, *, bounds: Any = None, seed: Optional[int] = None, weights: Any = None,
            max_layers: Optional[int] = None, layers: Optional[int] = None, directions: Optional[int] = None,
            knots: Optional[int] = None, damping: Optional[float] = None, bandwidth: Optional[float] = None,
            validation_fraction: Optional[float] = None, whiten: str = "cholesky",
            rotation: str = "max-sliced", conditional: bool = True, scale: bool = True,
            threads: Optional[int] = None) -> Flow:
        """Fit a flow to samples.

        Parameters
        ----------
        samples : array_like, shape (n, d)
            The points; (n,) for d = 1; a 3-d array (chains, draws, d) is
            flattened. Converted to float64 (lists, float32 and strided
            arrays are fine).
        bounds : array_like, optional
            Box of the support: shape (d, 2) (rows of low, high) or a pair
            (lower, upper); ``±inf`` or None for an open side. q is then
            zero outside, and every sample must lie strictly inside.
        seed : int, optional
            Seed of every random choice of the fit (the same seed, the same
            flow); None draws a fresh one.
        weights : array_like, shape (n,), optional
            Non-negative weights of the samples.
        max_layers : int, optional
            Cap on the layers when a held-out set chooses their number
            (default 10).
        layers : int, optional
            Exactly this many layers, no held-out set.
        directions : int, optional
            Directions per layer (default min(d, 128)).
        knots : int, optional
            Interior knots per spline (default sqrt(n) in [50, 200]).
        damping : float, optional
            Share of the way to Gaussian each layer moves, in (0, 1]
            (default 0.9).
        bandwidth : float, optional
            Factor on Scott's kernel bandwidth (default 1).
        validation_fraction : float, optional
            Held-out share in (0, 0.5] (default 0.2).
        whiten : {"cholesky", "pca", "none"}
        rotation : {"max-sliced", "random"}
        conditional : bool
            Allow conditional layers (default True); False fits sliced
            layers only. Without a held-out set (``layers`` given) all
            layers are sliced.
        scale : bool
            Try a scale layer first (default True): every coordinate but
            one centred and rescaled by lines in that one, the geometry of
            a variance parameter setting the others' scale (Neal's
            funnel). It is kept only when the flow with it predicts
            held-out points better; not tried with ``layers`` given or
            above 256 dimensions. False never fits one.
        threads : int, optional
            Threads for the fit and later use; default all.

        Returns
        -------
        Flow

        Raises
        ------
        ValueError
            Bad shapes or data: NaN, a constant column, fewer than 2d
            distinct points, points outside the bounds.
        """
        x = as_c(samples, "samples")
        if x.ndim == 1:
            x = x.reshape(-1, 1)
        elif x.ndim == 3:
            x = x.reshape(-1, x.shape[2])
        if x.ndim != 2:
            raise ValueError("samples must have shape (n, d), not %s" % (x.shape,))
        n, d = x.shape
        if n == 0 or d == 0:
            raise ValueError("samples of shape %s hold no points" % (x.shape,))
        if whiten not in _WHITEN:
            raise ValueError("whiten must be one of %s, not %r" % (sorted(_WHITEN), whiten))
        if rotation not in _ROTATION:
            raise ValueError("rotation must be one of %s, not %r" % (sorted(_ROTATION), rotation))
        opt = _lib.new_struct(_lib.FlowOptions)
        opt.max_layers = positive_int(max_layers, "max_layers", bits=32)
        opt.layers = positive_int(layers, "layers", bits=32)
        opt.directions = positive_int(directions, "directions", bits=32)
        opt.knots = positive_int(knots, "knots", bits=32)
        opt.threads = positive_int(threads, "threads", bits=32)
        opt.whiten = _WHITEN[whiten]
        opt.rotation = _ROTATION[rotation]
        if conditional not in _CONDITIONAL:
            raise ValueError("conditional must be True or False, not %r" % (conditional,))
        opt.conditional = _CONDITIONAL[conditional]
        if scale not in _SCALE:
            raise ValueError("scale must be True or False, not %r" % (scale,))
        opt.scale = _SCALE[scale]
        opt.damping = float(damping or 0)
        opt.bandwidth = float(bandwidth or 0)
        opt.validation_fraction = float(validation_fraction or 0)
        opt.seed = seed_value(seed)
        lo = hi = None
        if bounds is not None:
            lo, hi = bounds_arrays(bounds, d)
        opt.lower, opt.upper = ptr(lo), ptr(hi)
        w = None
        if weights is not None:
            w = as_c(weights, "weights").reshape(-1)
            if w.shape != (n,):
                raise ValueError("weights must have shape (%d,), not %s" % (n, np.shape(weights)))
        handle = ctypes.c_void_p()

        def call() -> Tuple[int, Any]:
            err = _lib.new_error()
            return _lib.lib.gbs_flow_fit(ptr(x), n, d, ptr(w), ctypes.byref(opt),
                                         ctypes.byref(handle), ctypes.byref(err)), err

        def abandon(status: int, err: Any) -> None:
            # Ctrl-C during the fit: the caller has moved on; free what the
            # fit produced (x, w, lo, hi stay alive in call's closure).
            _lib.take_error(err)
            if status == _lib.OK:
                _lib.lib.gbs_flow_free(handle, None)

        run(call, on_abandon=abandon)
        return cls(handle)

    def _points(self, x: Any) -> Tuple[np.ndarray, bool]:
        """x as an (n, d) array, and whether it was one point."""
        scalar = np.ndim(x) == 0
        x = as_c(x, "x")  # (ascontiguousarray makes 0-d arrays 1-d)
        d = self.dim
        if scalar and d == 1:
            return x.reshape(1, 1), True
        if x.ndim == 1 and d == 1:
            return x.reshape(-1, 1), False
        if x.ndim == 1 and x.shape[0] == d:
            return x.reshape(1, d), True
        if x.ndim == 2 and x.shape[1] == d:
            return x, False
        raise ValueError("points of shape %s for a flow of dimension %d: give shape (n, %d) or (%d,)"
                         % (x.shape, d, d, d))

    def log_prob(self, x: Any) -> Union[np.ndarray, float]:
        """log q at the points x.

        Parameters
        ----------
        x : array_like, shape (n, d) or (d,)
            For d = 1, shape (n,) is n points.

        Returns
        -------
        numpy.ndarray of shape (n,), or a float for one point of shape (d,)
            -inf outside the bounds, NaN at points with a NaN coordinate.
        """
        x, one = self._points(x)
        out = np.empty(len(x))
        if len(x):
            _lib.call(_lib.lib.gbs_flow_log_prob, self._handle, ptr(x), len(x), ptr(out))
        return float(out[0]) if one else out

    @overload
    def sample(self, n: int, seed: Optional[int] = ..., return_log_prob: Literal[False] = ...) -> np.ndarray: ...

    @overload
    def sample(self, n: int, seed: Optional[int] = ...,
               return_log_prob: Literal[True] = ...) -> Tuple[np.ndarray, np.ndarray]: ...

    def sample(self, n: int, seed: Optional[int] = None,
               return_log_prob: bool = False) -> Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]:
        """Draw n points from q.

        Parameters
        ----------
        n : int
        seed : int, optional
            The same seed gives the same draws; None draws a fresh one.
        return_log_prob : bool
            Also return log q at the draws.

        Returns
        -------
        x : numpy.ndarray, shape (n, d)
        log_q : numpy.ndarray, shape (n,)
            Only with ``return_log_prob=True``.
        """
        n = int(n)
        if n < 0:
            raise ValueError("n must be >= 0, not %d" % n)
        what = "n = %d draws of dimension %d" % (n, self.dim)
        x = empty((n, self.dim), what)
        lq = empty(n, what)
        if n:
            _lib.call(_lib.lib.gbs_flow_sample, self._handle, n, seed_value(seed), ptr(x), ptr(lq))
        return (x, lq) if return_log_prob else x

    def _map(self, fn: Callable[..., int], x: Any) -> Tuple[np.ndarray, np.ndarray]:
        x, _ = self._points(x)
        out = np.empty_like(x)
        ld = np.empty(len(x))
        if len(x):
            _lib.call(fn, self._handle, ptr(x), len(x), ptr(out), ptr(ld))
        return out, ld

    def forward(self, x: Any) -> Tuple[np.ndarray, np.ndarray]:
        """Map points to the Gaussianized space.

        Parameters
        ----------
        x : array_like, shape (n, d)

        Returns
        -------
        z : numpy.ndarray, shape (n, d)
            Standard normal when x follows q.
        log_det : numpy.ndarray, shape (n,)
            log abs(det dz/dx), so that log q(x) = log N(z; 0, I) + log_det.
        """
        return self._map(_lib.lib.gbs_flow_forward, x)

    def inverse(self, z: Any) -> Tuple[np.ndarray, np.ndarray]:
        """Map Gaussianized points back: returns x of shape (n, d) and
        log abs(det dx/dz) of shape (n,)."""
        return self._map(_lib.lib.gbs_flow_inverse, z)

    @property
    def warnings(self) -> List[str]:
        """Fallbacks taken during the fit, as a list of str."""
        arr = ctypes.POINTER(ctypes.c_char_p)()
        n = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_flow_warnings, self._handle, ctypes.byref(arr), ctypes.byref(n))
        warnings: List[str] = _lib.take_warnings(arr, n.value)
        return warnings

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the flow to a file (the library's binary format)."""
        _lib.call(_lib.lib.gbs_flow_save, self._handle, os.fsencode(path))

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> Flow:
        """Read a flow written by :meth:`save`."""
        handle = ctypes.c_void_p()
        _lib.call(_lib.lib.gbs_flow_load, os.fsencode(path), ctypes.byref(handle))
        return cls(handle)

    def to_bytes(self) -> bytes:
        """The serialized flow: the bytes :meth:`save` writes."""
        n = ctypes.c_int64()
        _lib.call(_lib.lib.gbs_flow_to_buffer, self._handle, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(max(1, n.value))
        _lib.call(_lib.lib.gbs_flow_to_buffer, self._handle, buf, n.value, ctypes.byref(n))
        return buf.raw[: n.value]

    @classmethod
    def from_bytes(cls, data: bytes) -> Flow:
        """A flow from the bytes of :meth:`to_bytes`."""
        data = bytes(data)
        handle = ctypes.c_void_p()
        _lib.call(_lib.lib.gbs_flow_from_buffer, data, len(data), ctypes.byref(handle))
        return cls(handle)

    def __reduce__(self) -> Tuple[Callable[[bytes], Flow], Tuple[bytes]]:
        return (Flow.from_bytes, (self.to_bytes(),))

    def close(self) -> None:
        """Release the library's flow now (otherwise when the object is
        garbage collected)."""
        handle = getattr(self, "_handle", None)
        self._handle = None
        # In a forked child the flow belongs to the parent's Go runtime,
        # which the child cannot call: the handle is dropped.
        if handle and _lib.lib is not None and not _lib.forked():
            _lib.lib.gbs_flow_free(handle, None)

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Flow(dim=%d, layers=%d, conditional_layers=%d)" % (
            self.dim, self.layers, self.conditional_layers)
