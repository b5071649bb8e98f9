// The gopy evaluation (docs/gopy.md) is a module of its own, so that the
// library's go.mod requires nothing the library does not import: gopy and
// goimports are pinned here, in this module's tool block.
module github.com/gbs-evidence/gbs/bench/gopy

go 1.24.0

require github.com/gbs-evidence/gbs v0.0.0

require (
	github.com/go-python/gopy v0.5.0 // indirect
	github.com/gonuts/commander v0.1.0 // indirect
	github.com/gonuts/flag v0.1.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/mod v0.23.0 // indirect
	golang.org/x/sync v0.12.0 // indirect
	golang.org/x/tools v0.30.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/gbs-evidence/gbs => ../..

tool (
	github.com/go-python/gopy
	golang.org/x/tools/cmd/goimports
)
