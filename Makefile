# gbs: Gaussianized bridge sampling. `make demo` and `make test` do all the
# set-up they need on a fresh machine with Go, a C compiler and Python 3.

GO      ?= go
PYTHON  ?= python3
PREFIX  ?= /usr/local
BUILD   := build
LIB     := $(BUILD)/lib/libgbs.so
VENV    := .venv
VPY     := $(VENV)/bin/python

.PHONY: all build lib install test test-go test-c test-cgocheck test-python demo bench bench-c bench-paper bench-ns bench-smoke venv clean

all: build lib

build:
	$(GO) build ./...

# The C shared library and its header.
lib: $(LIB)

$(LIB): $(shell find capi gbs flow nuts ensemble -name '*.go' -not -name '*_test.go') include/gbs.h go.mod go.sum
	mkdir -p $(BUILD)/lib $(BUILD)/include
	$(GO) build -buildmode=c-shared -o $(LIB) ./capi
	rm -f $(BUILD)/lib/libgbs.h
	cp include/gbs.h $(BUILD)/include/gbs.h

# Header, library and pkg-config file under $(PREFIX).
install: lib
	mkdir -p $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	cp $(LIB) $(DESTDIR)$(PREFIX)/lib/libgbs.so
	cp include/gbs.h $(DESTDIR)$(PREFIX)/include/gbs.h
	sed -e 's|@PREFIX@|$(abspath $(PREFIX))|' gbs.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/gbs.pc

# The Python virtual environment for tests, examples and benchmarks.
venv: $(VENV)/.stamp

$(VENV)/.stamp: python/requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r python/requirements-dev.txt
	touch $@

test: test-go test-c test-cgocheck test-python bench-smoke

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# C and C++ programs linked through the installed pkg-config file.
CTEST_PREFIX := $(abspath $(BUILD)/prefix)
CTESTS := test_evidence test_flow test_ensemble test_errors test_cancel test_leaks test_limits

test-c:
	$(MAKE) install PREFIX=$(CTEST_PREFIX)
	mkdir -p $(BUILD)/ctest
	set -e; export PKG_CONFIG_PATH=$(CTEST_PREFIX)/lib/pkgconfig; \
	for t in $(CTESTS); do \
	  cc -std=c11 -O1 -Wall -DGBS_TEST_FLOW -o $(BUILD)/ctest/$$t tests/c/$$t.c $$(pkg-config --cflags --libs gbs) -lm -lpthread; \
	done; \
	c++ -std=c++17 -O1 -Wall -o $(BUILD)/ctest/test_cpp tests/c/test_cpp.cpp $$(pkg-config --cflags --libs gbs); \
	cd $(BUILD)/ctest && for t in $(CTESTS) test_cpp; do echo "== $$t"; ./$$t; done
	@# Definite leaks fail the run. Valgrind also reports the Go runtime's
	@# stack switching as invalid accesses; those are not leaks, so only the
	@# leak summary is checked.
	@if command -v valgrind >/dev/null; then \
	  echo "== test_leaks under valgrind"; \
	  valgrind --leak-check=full --show-leak-kinds=definite --undef-value-errors=no \
	    --log-file=$(BUILD)/ctest/valgrind.log $(BUILD)/ctest/test_leaks 200; \
	  grep -E "definitely lost" $(BUILD)/ctest/valgrind.log; \
	  grep -qE "definitely lost: 0 bytes|no leaks are possible" $(BUILD)/ctest/valgrind.log || \
	    { grep -B2 -A20 "definitely lost in" $(BUILD)/ctest/valgrind.log; exit 1; }; \
	fi

bench-c: lib
	mkdir -p $(BUILD)/ctest
	cc -std=c11 -O2 -o $(BUILD)/ctest/bench_callback tests/c/bench_callback.c -Iinclude -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -lgbs -lm -lpthread
	$(BUILD)/ctest/bench_callback

# The C tests again against a library built with cgocheck2, which checks
# every pointer crossing the cgo boundary at run time, and the Go tests of
# capi under cgocheck2; check_abi.sh compares gbs.h with cgo's header.
test-cgocheck: test-c
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./capi/...
	GOEXPERIMENT=cgocheck2 $(GO) build -buildmode=c-shared -o $(BUILD)/cgocheck/libgbs.so ./capi
	tests/c/check_abi.sh include/gbs.h $(BUILD)/cgocheck/libgbs.so $(BUILD)/cgocheck/libgbs.h
	set -e; for t in test_evidence test_flow test_errors test_cancel; do \
	  cc -std=c11 -O1 -DGBS_TEST_FLOW -Iinclude -o $(BUILD)/cgocheck/$$t tests/c/$$t.c \
	    -L$(BUILD)/cgocheck -Wl,-rpath,$(abspath $(BUILD)/cgocheck) -lgbs -lm -lpthread; \
	  echo "== $$t (cgocheck2)"; (cd $(BUILD)/cgocheck && ./$$t > $$t.log 2>&1) || { cat $(BUILD)/cgocheck/$$t.log; exit 1; }; \
	  tail -n 1 $(BUILD)/cgocheck/$$t.log; \
	done

test-python: lib venv
	$(VPY) -m pytest -q tests/python

demo:
	$(GO) run ./cmd/gbs-demo -problem funnel

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./gbs/ ./flow/ ./nuts/

# The paper's comparison (about two hours on 2 cores with the defaults).
bench-paper: venv
	mkdir -p bench-out
	$(GO) run ./cmd/gbs-bench -o bench-out/runs.jsonl
	$(VPY) bench/summarize.py bench-out/runs.jsonl --command "$(GO) run ./cmd/gbs-bench -o bench-out/runs.jsonl"

# Nested sampling (dynesty, default settings) on the same problems, for
# the comparison; hours of CPU, resumable (runs already in the output are
# skipped). NS_FLAGS passes options, e.g. NS_FLAGS="--repeats 4 --maxcall 30000000".
bench-ns: $(VENV)/.bench-stamp
	$(VPY) bench/dynesty_bench.py --out bench/results/ns.jsonl $(NS_FLAGS)

$(VENV)/.bench-stamp: bench/requirements.txt $(VENV)/.stamp
	$(VPY) -m pip install --quiet -r bench/requirements.txt
	touch $@

# Two repeats of every method on the funnel: the benchmark's plumbing, end to end.
bench-smoke: venv
	mkdir -p $(BUILD)/smoke
	$(GO) run ./cmd/gbs-bench -problems funnel -repeats-gbs 2 -repeats 2 -o $(BUILD)/smoke/runs.jsonl
	$(VPY) bench/summarize.py $(BUILD)/smoke/runs.jsonl --markdown $(BUILD)/smoke/results.md --figure $(BUILD)/smoke/results.png
	test $$(grep -c '"method"' $(BUILD)/smoke/runs.jsonl) -eq 14
	! grep -q '"error"' $(BUILD)/smoke/runs.jsonl

clean:
	rm -rf $(BUILD) $(VENV)
