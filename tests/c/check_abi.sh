#!/bin/sh
# Checks that include/gbs.h (hand-written) and libgbs agree. The library's
# gbs_ functions are C wrappers (capi/forkguard.c, which refuse a forked
# child before entering Go) around cgo's //export gbsgo_ functions:
#  1. the same set of gbs_ functions: declared in the header <=> exported by
#     the library;
#  2. every gbs_ function goes through a wrapper: cgo exports no gbs_
#     function, and exactly one gbsgo_X for every gbs_X of the header
#     except those answered in C alone (gbs_abi_version, gbs_version);
#  3. the same prototypes: the header and cgo's generated header, with
#     gbsgo_ read as gbs_, compile together, const qualifiers aside (cgo
#     cannot write const), so a parameter of another type or a missing
#     parameter is a compile error.
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

# cgo declares its exports as `extern ...` lines (preambles may add static helpers).
grep '^extern ' "$cgo_header" >"$tmp/cgo_exports"
if grep -q '\bgbs_[a-z0-9_]*[[:space:]]*(' "$tmp/cgo_exports"; then
  echo "check_abi: cgo exports gbs_ functions directly (they must be gbsgo_, behind capi/forkguard.c):"
  grep -o '\bgbs_[a-z0-9_]*[[:space:]]*(' "$tmp/cgo_exports" | sort -u
  exit 1
fi
grep -o '\bgbsgo_[a-z0-9_]*[[:space:]]*(' "$tmp/cgo_exports" | tr -d '( \t' | sed 's/^gbsgo_/gbs_/' |
  sort -u >"$tmp/wrapped"
grep -v -x -e gbs_abi_version -e gbs_version "$tmp/declared" >"$tmp/need_go"
if ! cmp -s "$tmp/need_go" "$tmp/wrapped"; then
  echo "check_abi: gbs.h functions and cgo's gbsgo_ exports disagree (< header only, > cgo only):"
  diff "$tmp/need_go" "$tmp/wrapped" | grep '^[<>]'
  exit 1
fi

sed 's/\bgbsgo_/gbs_/g' "$cgo_header" >"$tmp/cgo_renamed.h"
printf '#include "gbs.h"\n#include "cgo_renamed.h"\n' >"$tmp/abi.c"
${CC:-cc} -fsyntax-only -Dconst= -I"$(dirname "$header")" -I"$tmp" "$tmp/abi.c"
echo "check_abi: $(wc -l <"$tmp/declared") functions, header and library agree"
