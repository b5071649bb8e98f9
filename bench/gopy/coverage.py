"""Which exported functions and methods of the gbs packages gopy binds.

    python bench/gopy/coverage.py GENDIR PKG [PKG...]

GENDIR/PKG holds the output of `go tool gopy gen` for ./PKG (run.sh makes
it); run from the repository root. Prints, per package, every exported
function or method that has no Python counterpart in the generated PKG.py,
with its Go signature. gopy warns about some of these ("ignoring python
incompatible function"); the others it drops without a word (any function
with a parameter of a type it has not bound, such as context.Context).
"""

import re
import subprocess
import sys

FUNC = re.compile(r"^func (?:\((?:\w+ )?\*?(\w+)\) )?(\w+)")


def dropped(gendir, pkg):
    doc = subprocess.run(["go", "doc", "-all", "./" + pkg], check=True,
                         capture_output=True, text=True).stdout
    with open("%s/%s/%s.py" % (gendir, pkg, pkg)) as f:
        py = f.read()
    out = []
    for line in doc.splitlines():
        m = FUNC.match(line)
        if not m:
            continue
        recv, name = m.groups()
        if recv:
            found = re.search(r"^\tdef %s\(self" % name, py, re.M)
        else:
            found = re.search(r"^def %s\(" % name, py, re.M)
        if not found:
            out.append(line)
    return out


def main():
    gendir, pkgs = sys.argv[1], sys.argv[2:]
    for pkg in pkgs:
        miss = dropped(gendir, pkg)
        print("%s: %d exported functions or methods without a binding" % (pkg, len(miss)))
        for line in miss:
            print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
