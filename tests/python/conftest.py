import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Tests run against the source tree and the library `make lib` builds.
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("GBS_LIBRARY", os.path.join(ROOT, "build", "lib", "libgbs.so"))
