#!/bin/sh
# Checks that include/gbs.h (hand-written) and libgbs (cgo's //export
# functions) agree:
#  1. the same set of gbs_ functions: declared in the header <=> exported by
#     the library;
#  2. the same prototypes: the header and cgo's generated header compile
#     together, const qualifiers aside (cgo cannot write const), so a
#     parameter of another type or a missing parameter is a compile error.
# Usage: check_abi.sh include/gbs.h path/to/libgbs.so path/to/cgo-header.h
set -eu
header=$1 lib=$2 cgo_header=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gbs_ identifiers followed by "(" on a declaration line, minus typedefs.
${CC:-cc} -E -P -x c "$header" | tr ';' '\n' | grep -v typedef |
  grep -o '\bgbs_[a-z0-9_]*[[:space:]]*(' | tr -d '( \t' | sort -u >"$tmp/declared"
nm -D --defined-only "$lib" | awk '$3 ~ /^gbs_/ {print $3}' | sort -u >"$tmp/exported"
if ! cmp -s "$tmp/declared" "$tmp/exported"; then
  echo "check_abi: gbs.h and libgbs.so disagree (< header only, > library only):"
  diff "$tmp/declared" "$tmp/exported" | grep '^[<>]'
  exit 1
fi

printf '#include "gbs.h"\n#include "%s"\n' "$(basename "$cgo_header")" >"$tmp/abi.c"
${CC:-cc} -fsyntax-only -Dconst= -I"$(dirname "$header")" -I"$(dirname "$cgo_header")" "$tmp/abi.c"
echo "check_abi: $(wc -l <"$tmp/declared") functions, header and library agree"
