"""progress=True: a tqdm bar (tqdm.auto, so a widget in Jupyter) counting
log-density evaluations, with the library's messages as its postfix;
without tqdm the messages go to stderr. progress=f (a callable): f(message)
for each of the library's messages, no bar."""

import sys
import warnings

from . import _lib


class Progress:
    def __init__(self, enabled, desc):
        self.enabled = bool(enabled)
        self.bar = None
        self.sink = None
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
                self.bar = tqdm(desc=desc, unit=" log p", total=None, leave=True)
        except ImportError:
            self.bar = None
        _lib.push_log_sink(self.message)

    def update(self, n):
        if self.bar is not None:
            self.bar.update(n)

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
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
