"""gbs.Flow: the Gaussianizing normalizing flow, usable on its own."""

import ctypes

import numpy as np

from . import _lib
from .evidence import _as_c, _bounds

_dp = ctypes.POINTER(ctypes.c_double)


def _ptr(a):
    return a.ctypes.data_as(_dp)


class Flow:
    """A normalized density q fitted to samples (sliced iterative
    Gaussianization): evaluate ``log_prob``, draw with ``sample``, map to and
    from the Gaussianized space, save and load.

    Create one with :meth:`Flow.fit` or :meth:`Flow.load`.
    """

    def __init__(self, handle):
        self._handle = handle
        info = _lib.FlowInfo()
        info.size = ctypes.sizeof(info)
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_get_info(self._handle, ctypes.byref(info), ctypes.byref(err)), err)
        self.dim, self.layers = int(info.dim), int(info.layers)

    @classmethod
    def fit(cls, samples, *, weights=None, bounds=None, seed=None, max_layers=None,
            layers=None, directions=None, knots=None, damping=None):
        """Fit a flow to samples of shape (n, d) (or (n,) for d = 1).

        Parameters
        ----------
        weights : array_like, shape (n,), optional
            Non-negative weights of the samples.
        bounds : array_like, shape (d, 2) or (2, d), optional
            Box of the support (±inf for none): q is zero outside.
        seed : int, optional
            Seed of every random choice of the fit.
        max_layers, layers, directions, knots, damping : optional
            Flow settings; see include/gbs.h (gbs_flow_options).
        """
        x = _as_c(samples)
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2:
            raise ValueError("samples must have shape (n, d), not %s" % (x.shape,))
        n, d = x.shape
        opt = _lib.FlowOptions()
        opt.size = ctypes.sizeof(opt)
        opt.max_layers = int(max_layers or 0)
        opt.layers = int(layers or 0)
        opt.directions = int(directions or 0)
        opt.knots = int(knots or 0)
        opt.damping = float(damping or 0)
        opt.seed = int(seed or 0) & 0xFFFFFFFFFFFFFFFF
        keep = []
        if bounds is not None:
            lo, hi = _bounds(bounds, d)
            keep += [lo, hi]
            opt.lower, opt.upper = _ptr(lo), _ptr(hi)
        w = None
        if weights is not None:
            w = _as_c(weights).reshape(-1)
            if w.shape != (n,):
                raise ValueError("weights must have shape (%d,), not %s" % (n, w.shape))
        handle = ctypes.c_void_p()
        err = _lib.new_error()
        status = _lib.lib.gbs_flow_fit(_ptr(x), n, d, None if w is None else _ptr(w),
                                       ctypes.byref(opt), ctypes.byref(handle), ctypes.byref(err))
        _lib.check(status, err)
        return cls(handle)

    def _points(self, x):
        x = _as_c(x)
        one = x.ndim == 1 and self.dim > 1 or x.ndim == 0
        x = x.reshape(-1, self.dim) if x.ndim != 2 else x
        if x.shape[1] != self.dim:
            raise ValueError("points of dimension %d for a flow of dimension %d" % (x.shape[1], self.dim))
        return x, one

    def log_prob(self, x):
        """log q at x of shape (d,) (a float) or (n, d) (shape (n,))."""
        x, one = self._points(x)
        out = np.empty(len(x))
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_log_prob(self._handle, _ptr(x), len(x), _ptr(out), ctypes.byref(err)), err)
        return float(out[0]) if one else out

    def sample(self, n, seed=None, return_log_prob=False):
        """Draw n points, shape (n, d); with return_log_prob also their log q."""
        x = np.empty((int(n), self.dim))
        lq = np.empty(int(n))
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_sample(self._handle, int(n), int(seed or 0) & 0xFFFFFFFFFFFFFFFF,
                                            _ptr(x), _ptr(lq), ctypes.byref(err)), err)
        return (x, lq) if return_log_prob else x

    def _map(self, fn, x):
        x, _ = self._points(x)
        out = np.empty_like(x)
        ld = np.empty(len(x))
        err = _lib.new_error()
        _lib.check(fn(self._handle, _ptr(x), len(x), _ptr(out), _ptr(ld), ctypes.byref(err)), err)
        return out, ld

    def forward(self, x):
        """Map x (n, d) to the Gaussianized space: (z, log|dz/dx|)."""
        return self._map(_lib.lib.gbs_flow_forward, x)

    def inverse(self, z):
        """Map z (n, d) back: (x, log|dx/dz|)."""
        return self._map(_lib.lib.gbs_flow_inverse, z)

    @property
    def warnings(self):
        """Fallbacks taken during the fit, as a list of strings."""
        arr = ctypes.POINTER(ctypes.c_char_p)()
        n = ctypes.c_int64()
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_warnings(self._handle, ctypes.byref(arr), ctypes.byref(n), ctypes.byref(err)), err)
        out = [arr[i].decode() for i in range(n.value)]
        _lib.lib.gbs_free_warnings(arr)
        return out

    def save(self, path):
        """Write the flow to a file."""
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_save(self._handle, str(path).encode(), ctypes.byref(err)), err)

    @classmethod
    def load(cls, path):
        """Read a flow written by :meth:`save`."""
        handle = ctypes.c_void_p()
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_load(str(path).encode(), ctypes.byref(handle), ctypes.byref(err)), err)
        return cls(handle)

    def to_bytes(self):
        """The serialized flow (the bytes :meth:`save` writes)."""
        n = ctypes.c_int64()
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_to_buffer(self._handle, None, 0, ctypes.byref(n), ctypes.byref(err)), err)
        buf = ctypes.create_string_buffer(n.value)
        _lib.check(_lib.lib.gbs_flow_to_buffer(self._handle, buf, n.value, ctypes.byref(n), ctypes.byref(err)), err)
        return buf.raw

    @classmethod
    def from_bytes(cls, data):
        """A flow from the bytes of :meth:`to_bytes`."""
        data = bytes(data)
        handle = ctypes.c_void_p()
        err = _lib.new_error()
        _lib.check(_lib.lib.gbs_flow_from_buffer(data, len(data), ctypes.byref(handle), ctypes.byref(err)), err)
        return cls(handle)

    def __reduce__(self):
        return (Flow.from_bytes, (self.to_bytes(),))

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _lib.lib.gbs_flow_free(handle, None)
            self._handle = None

    def __repr__(self):
        return "Flow(dim=%d, layers=%d)" % (self.dim, self.layers)
