# gbs: Gaussianized bridge sampling. `make demo` and `make test` do all the
# set-up they need on a fresh machine with Go, a C compiler and Python 3.

GO      ?= go
GOFLAGS ?=
export GOFLAGS

.PHONY: all build test test-go demo bench clean

all: build

build:
	$(GO) build ./...

test: test-go

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

demo:
	$(GO) run ./cmd/gbs-demo -problem funnel

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./gbs/

clean:
	rm -rf build .venv
