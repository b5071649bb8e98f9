#!/usr/bin/env bash
# Reproduces the gopy evaluation of docs/gopy.md (issue #6) from a fresh
# machine: builds libgbs.so (the C ABI the ctypes package loads) and a gopy
# extension of bench/gopy/gbspy, each from empty Go caches, timing both;
# then runs bench/gopy/bench.py on the two bindings.
#
#   bench/gopy/run.sh [SCRATCH]        (default /tmp/gbs-gopy)
#
# Needs what a fresh machine of the project has: Go (the version go.mod
# asks for), a C compiler, Python 3 with its headers and libpython (gopy
# links the extension against it), and the Go module proxy and PyPI.
# Everything it makes goes under SCRATCH (the generated binding included);
# nothing is written into the repository. PYTHON picks the interpreter
# (default python3); ROUNDS and REPEAT are passed to bench.py.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH=${1:-/tmp/gbs-gopy}
PYTHON=${PYTHON:-python3}
ROUNDS=${ROUNDS:-3}
REPEAT=${REPEAT:-5}
case "$SCRATCH" in /|"$ROOT"|"$ROOT"/*) echo "refusing SCRATCH=$SCRATCH" >&2; exit 2 ;; esac

# A module cache is read-only unless -modcacherw; keep SCRATCH removable.
export GOFLAGS="${GOFLAGS:-} -modcacherw"
# Only ever delete a directory this script made (it leaves a marker).
if [ -d "$SCRATCH" ] && [ -n "$(ls -A "$SCRATCH")" ]; then
	[ -e "$SCRATCH/.gbs-gopy-scratch" ] || { echo "$SCRATCH is not empty and not ours" >&2; exit 2; }
	chmod -R u+w "$SCRATCH" && rm -rf "$SCRATCH"
fi
mkdir -p "$SCRATCH"
touch "$SCRATCH/.gbs-gopy-scratch"
TIMES=$SCRATCH/build-times.md
cd "$ROOT"
# bench/gopy is a module of its own (bench/gopy/go.mod pins gopy and
# goimports in its tool block, so that the library's go.mod does not):
# `go tool` runs there.
GOPYMOD=$ROOT/bench/gopy
gotool() { (cd "$GOPYMOD" && go tool "$@"); }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# cold CACHE_NAME: empty Go build and module caches of their own, so that
# each build below starts as on a machine that never built Go code.
cold() {
	export GOCACHE=$SCRATCH/caches/$1/go-build GOMODCACHE=$SCRATCH/caches/$1/gomod
	mkdir -p "$GOCACHE" "$GOMODCACHE"
}

{
	echo "| step | seconds |"
	echo "|---|---|"
} >"$TIMES"
row() { echo "| $1 | $2 |" | tee -a "$TIMES"; }

echo "== versions"
go version
cc --version | head -1
"$PYTHON" --version
"$PYTHON" -c 'import sysconfig, os; h = sysconfig.get_config_var("INCLUDEPY"); assert os.path.exists(os.path.join(h, "Python.h")), "no Python.h: install the Python headers (python3-dev)"; print("Python.h in", h)'

# ---- ctypes: libgbs.so ------------------------------------------------------
echo "== ctypes: go build -buildmode=c-shared ./capi (empty caches)"
cold ctypes
t=$(now)
go build -buildmode=c-shared -o "$SCRATCH/libgbs/libgbs.so" ./capi
row "libgbs.so, cold: \`go build -buildmode=c-shared ./capi\` (downloads gonum, builds std with cgo)" "$(elapsed "$t")"
t=$(now)
go build -buildmode=c-shared -o "$SCRATCH/libgbs/libgbs.so" ./capi
row "libgbs.so, again (warm caches)" "$(elapsed "$t")"
rm -f "$SCRATCH/libgbs/libgbs.h" # cgo's header; the project ships include/gbs.h

# ---- gopy: the extension module --------------------------------------------
echo "== gopy: Python build dependencies (pip, no cache)"
t=$(now)
"$PYTHON" -m venv "$SCRATCH/venv"
PIP_NO_CACHE_DIR=1 "$SCRATCH/venv/bin/pip" install --quiet pybindgen setuptools wheel
row "gopy, cold: venv + \`pip install pybindgen setuptools wheel\`" "$(elapsed "$t")"
VPY=$SCRATCH/venv/bin/python

OUT=$SCRATCH/gopy/gbspy
gopy_build() {
	# gopy builds in OUT with `go build -mod=mod`: OUT needs a go.mod that
	# finds this repository and gopy's runtime package (gopyh).
	mkdir -p "$OUT"
	cat >"$OUT/go.mod" <<EOF
module gbsgopy

go 1.24.0

require (
	github.com/gbs-evidence/gbs v0.0.0
	github.com/gbs-evidence/gbs/bench/gopy v0.0.0
	github.com/go-python/gopy $(cd "$GOPYMOD" && go list -m -f '{{.Version}}' github.com/go-python/gopy)
)

replace github.com/gbs-evidence/gbs => $ROOT

replace github.com/gbs-evidence/gbs/bench/gopy => $GOPYMOD
EOF
	cp "$GOPYMOD/go.sum" "$OUT/go.sum"
	# gopy runs `goimports` from PATH: use the one pinned in the tool block
	# of bench/gopy/go.mod.
	PATH="$(dirname "$(gotool -n goimports)"):$PATH" \
		gotool gopy build -output="$OUT" -vm="$VPY" -no-warn \
		github.com/gbs-evidence/gbs/bench/gopy/gbspy >"$SCRATCH/gopy-build.log" 2>&1 ||
		{ cat "$SCRATCH/gopy-build.log"; exit 1; }
}
echo "== gopy: go tool gopy build (empty caches)"
cold gopy
t=$(now)
gopy_build
row "gopy, cold: \`go tool gopy build\` (downloads and builds gopy and goimports, generates, 2 c-shared links, cc of the CPython module)" "$(elapsed "$t")"
t=$(now)
gopy_build
row "gopy, again (warm caches)" "$(elapsed "$t")"
# OUT is a Python package (gopy writes __init__.py, gbspy.py, go.py and
# the extension); bench.py imports it from its parent directory.
ls -la "$OUT" >"$SCRATCH/gopy-files.txt"
{
	echo
	echo "| artifact | bytes |"
	echo "|---|---|"
	echo "| libgbs.so | $(stat -c %s "$SCRATCH/libgbs/libgbs.so") |"
	for f in "$OUT"/_gbspy*.so; do echo "| $(basename "$f") | $(stat -c %s "$f") |"; done
} | tee -a "$TIMES"

# ---- what gopy makes of the real API ---------------------------------------
echo "== gopy gen of the packages themselves: what has no binding"
mkdir -p "$SCRATCH/gen"
for p in gbs flow nuts ensemble problems; do
	PATH="$(dirname "$(gotool -n goimports)"):$PATH" \
		gotool gopy gen -output="$SCRATCH/gen/$p" -vm="$VPY" \
		"github.com/gbs-evidence/gbs/$p" >"$SCRATCH/gen/$p.log" 2>&1 ||
		{ cat "$SCRATCH/gen/$p.log"; exit 1; }
done
"$VPY" bench/gopy/coverage.py "$SCRATCH/gen" gbs flow nuts ensemble problems | tee "$SCRATCH/coverage.txt"
grep -h "ignoring python incompatible" "$SCRATCH"/gen/*.log >>"$SCRATCH/coverage.txt" || true

# ---- measurements -----------------------------------------------------------
echo "== numpy for the benchmark (both bindings need it at run time)"
"$SCRATCH/venv/bin/pip" install --quiet numpy
unset GOCACHE GOMODCACHE
echo "== bench/gopy/bench.py"
"$VPY" bench/gopy/bench.py --gopy-dir "$SCRATCH/gopy" --lib "$SCRATCH/libgbs/libgbs.so" \
	--package "$ROOT/python" --rounds "$ROUNDS" --repeat "$REPEAT" \
	--json "$SCRATCH/results.json" --markdown "$SCRATCH/results.md"
echo
echo "== build times ($TIMES)"
cat "$TIMES"
echo
echo "Results: $SCRATCH/results.md, $SCRATCH/build-times.md, $SCRATCH/coverage.txt"
