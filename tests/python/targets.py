"""Log densities for the tests, importable by spawned pool workers."""

import math
import time

import numpy as np

C = 1.5  # ln Z of the Gaussians below


def gauss(x, c=C):
    """A standard normal in len(x) dimensions times e^c: ln Z = c."""
    x = np.asarray(x)
    return c - 0.5 * float(np.sum(x * x)) - 0.5 * len(x) * math.log(2 * math.pi)


def gauss_vec(x, c=C):
    """gauss on a batch (n, d) -> (n,), with the same floating point
    operations per point."""
    return c - 0.5 * np.sum(x * x, axis=1) - 0.5 * x.shape[1] * math.log(2 * math.pi)


def banana(x):
    """The 2-d banana exp(-(x1^2 - x2)^2/0.01 - (x1 - 1)^2): ln Z = ln(0.1 pi)."""
    return -((x[0] ** 2 - x[1]) ** 2 / 0.01 + (x[0] - 1) ** 2)


BANANA_LOGZ = math.log(0.1 * math.pi)


class Boom(Exception):
    pass


def explode(x):
    if x[0] > 1.0:
        raise Boom("bad point %s" % (x,))
    return gauss(x)


def slow(x):
    time.sleep(0.05)
    return gauss(x)
