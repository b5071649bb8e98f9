"""progress=True: a tqdm bar (tqdm.auto, so a widget in Jupyter) counting
log-density evaluations against the planned total (so it shows an ETA),
with the library's messages as its postfix; without tqdm the messages go to
stderr. progress=f (a callable): f(message) for each of the library's
messages, no bar."""

from __future__ import annotations

import sys
import warnings
from typing import Any, Optional, Tuple

from . import _lib


class Progress:
    """``total``: (planned evaluations, the most the adaptive n_q rule may
    add). The bar starts at the plan; if the rule adds proposal draws, the
    total grows to the cap, and is set to the final count at the end."""

    def __init__(self, enabled: Any, desc: str, total: Optional[Tuple[int, int]] = None):
        self.enabled = bool(enabled)
        self.bar: Any = None
        self.sink: Any = None
        self.total = total
        if not self.enabled:
            return
        if callable(enabled):  # progress=f: f(message) and no bar
            self.sink = enabled
            _lib.push_log_sink(self.message)
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # tqdm.auto without ipywidgets
                from tqdm.auto import tqdm
                plan = None if total is None or total[0] <= 0 else total[0]
                self.bar = tqdm(desc=desc, unit=" log p", total=plan, leave=True)
        except ImportError:
            self.bar = None
        _lib.push_log_sink(self.message)

    def update(self, n: int) -> None:
        bar = self.bar
        if bar is None:
            return
        if bar.total is not None and self.total is not None and bar.n + n > bar.total:
            # The adaptive rule chose more proposal draws than the plan.
            bar.total = max(bar.n + n, self.total[0] + self.total[1])
        bar.update(n)

    def message(self, text):
        if self.sink is not None:
            self.sink(text)
        elif self.bar is not None:
            self.bar.set_postfix_str(text, refresh=True)
        else:
            print("gbs: " + text, file=sys.stderr, flush=True)

    def close(self):
        if not self.enabled:
            return
        _lib.pop_log_sink(self.message)
        if self.bar is not None:
            if self.bar.total is not None and self.bar.n < self.bar.total:
                self.bar.total = self.bar.n  # finished below the cap
                self.bar.refresh()
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
