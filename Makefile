# gbs: Gaussianized bridge sampling. `make demo` and `make test` do all the
# set-up they need on a fresh machine with Go, a C compiler and Python 3.

GO      ?= go
PYTHON  ?= python3
PREFIX  ?= /usr/local
BUILD   := build
LIB     := $(BUILD)/lib/libgbs.so
VENV    := .venv
VPY     := $(VENV)/bin/python

.PHONY: all build lib install test test-go test-python demo bench venv clean

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

# The Python virtual environment for tests, examples and benchmarks.
venv: $(VENV)/.stamp

$(VENV)/.stamp: python/requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r python/requirements-dev.txt
	touch $@

test: test-go test-python

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

test-python: lib venv
	$(VPY) -m pytest -q tests/python

demo:
	$(GO) run ./cmd/gbs-demo -problem funnel

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./gbs/ ./flow/ ./nuts/

clean:
	rm -rf $(BUILD) $(VENV)
