#!/bin/sh
# make stress: the test suites repeated on a loaded machine, to find tests
# that fail only now and then (timing, scheduling, memory, load).
#
#   every Go package's tests STRESS_COUNT times (default 20; go test
#   -count, so each test runs that many times in a row in its package's
#   binary), then the Python suite STRESS_PY times (default 3), while
#   STRESS_LOAD busy processes (default: one per core) load the CPUs.
#
# STRESS_PKGS narrows the Go packages (default ./...). Logs go to
# build/stress/; the summary at the end names every failed test. Exits
# non-zero if anything failed. Long: about STRESS_COUNT times the Go
# suite's time, slower under the load; it is not part of make test.
set -u
GO=${GO:-go}
VPY=${VPY:-.venv/bin/python}
COUNT=${STRESS_COUNT:-20}
PY=${STRESS_PY:-3}
PKGS=${STRESS_PKGS:-./...}
LOAD=${STRESS_LOAD:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
OUT=build/stress
mkdir -p "$OUT"

loaders=""
stop_load() {
	for p in $loaders; do kill "$p" 2>/dev/null; done
	loaders=""
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
i=0
while [ "$i" -lt "$LOAD" ]; do
	sh -c 'while :; do :; done' &
	loaders="$loaders $!"
	i=$((i + 1))
done
echo "stress: $LOAD busy process(es) started; load: $(uptime)"

status=0
echo "== go test -count=$COUNT $PKGS (log: $OUT/go.log)"
start=$(date +%s)
# -timeout: a package's binary runs its tests COUNT times in one process.
if ! $GO test -count="$COUNT" -timeout 12h $PKGS > "$OUT/go.log" 2>&1; then
	status=1
fi
echo "   $(($(date +%s) - start)) s"
grep -E '^(ok|FAIL|---)' "$OUT/go.log" | grep -v -- '--- PASS' | grep -v -- '--- SKIP' || true

j=1
while [ "$j" -le "$PY" ]; do
	echo "== Python suite, run $j of $PY (log: $OUT/python-$j.log)"
	start=$(date +%s)
	if ! $VPY -m pytest -q -p no:cacheprovider tests/python > "$OUT/python-$j.log" 2>&1; then
		status=1
	fi
	echo "   $(($(date +%s) - start)) s: $(tail -n 1 "$OUT/python-$j.log")"
	grep -E '^(FAILED|ERROR) ' "$OUT/python-$j.log" || true
	j=$((j + 1))
done

echo "stress: load at the end: $(uptime)"
if [ "$status" -ne 0 ]; then
	echo "stress: FAILED (failed tests above; full output in $OUT/)"
	exit 1
fi
echo "stress: all passed"
