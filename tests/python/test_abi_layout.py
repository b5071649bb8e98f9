"""The ctypes view of the C structs (python/gbs/_lib.py) against
include/gbs.h, field by field.

The header is the one definition of every struct. This test reads each
``typedef struct NAME { ... } NAME;`` of the preprocessed header, compiles a
small C program that prints sizeof, alignment and, for every field, offsetof
and sizeof, and compares them with the ctypes struct that _lib.STRUCTS maps
the name to: the same fields in the same order, of the type the header
declares, at the same offsets, with the same sizes. A field added to the
header and not to _lib.py (or the other way round), a reordered field or a
changed type fails here instead of corrupting memory at run time. The
codes _lib.py writes into the option structs (GBS_METHOD_*, GBS_ANNEAL_*,
...) are compared with the header's macros the same way.
"""

import ctypes
import os
import re
import shutil
import subprocess

import pytest

from gbs import _lib
from gbs.result import Diagnostics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "gbs.h")
CC = os.environ.get("CC", "cc")

pytestmark = pytest.mark.skipif(shutil.which(CC) is None, reason="no C compiler (%s)" % CC)

# The ctypes type each C scalar type of the header must be.
_SCALARS = {"size_t": ctypes.c_size_t, "int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64,
            "uint64_t": ctypes.c_uint64, "double": ctypes.c_double}


def header_structs():
    """{name: [(field, C type text), ...]} of every struct the header defines."""
    src = subprocess.run([CC, "-E", "-P", "-x", "c", HEADER], check=True, capture_output=True,
                         text=True).stdout
    out = {}
    for name, body, alias in re.findall(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", src, re.S):
        assert name == alias, "typedef struct %s {...} %s: the names differ" % (name, alias)
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            assert "(" not in decl, "%s: a function-pointer field (%s) this test cannot read" % (name, decl)
            # "int64_t burn, thin" declares two fields of one type.
            first, *more = [d.strip() for d in decl.split(",")]
            m = re.match(r"(.*?)([\s*]+)(\w+)$", first)
            assert m, "%s: cannot read the field %r" % (name, decl)
            base = m.group(1).replace("const ", "").strip()
            fields.append((m.group(3), base + m.group(2).replace(" ", "")))
            for d in more:
                stars, field = re.match(r"(\**)\s*(\w+)$", d).groups()
                fields.append((field, base + stars))
        out[name] = fields
    return out


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """{struct: (sizeof, alignof, {field: (offsetof, sizeof)})} from the compiler."""
    structs = header_structs()
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "gbs.h"', "int main(void) {"]
    for name, fields in structs.items():
        lines.append('  printf("S %s %%zu %%zu\\n", sizeof(%s), _Alignof(%s));' % (name, name, name))
        for field, _ in fields:
            lines.append('  printf("F %s %s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                         % (name, field, name, field, name, field))
    lines += ["  return 0;", "}"]
    tmp = tmp_path_factory.mktemp("layout")
    c, exe = tmp / "layout.c", tmp / "layout"
    c.write_text("\n".join(lines) + "\n")
    subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-I", os.path.dirname(HEADER), "-o", str(exe),
                    str(c)], check=True)
    out = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        kind, name, *rest = line.split()
        if kind == "S":
            out[name] = (int(rest[0]), int(rest[1]), {})
        else:
            out[name][2][rest[0]] = (int(rest[1]), int(rest[2]))
    return structs, out


def test_every_header_struct_has_a_ctypes_struct(layout):
    structs, _ = layout
    assert sorted(structs) == sorted(_lib.STRUCTS), (
        "structs of include/gbs.h without a ctypes struct in _lib.STRUCTS (or the other way round)")


@pytest.mark.parametrize("name", sorted(_lib.STRUCTS))
def test_ctypes_struct_matches_header(layout, name):
    structs, sizes = layout
    cls = _lib.STRUCTS[name]
    size, align, fields = sizes[name]
    header_fields = structs[name]
    assert [f for f, _ in cls._fields_] == [f for f, _ in header_fields], (
        "%s: the fields of %s differ from the header's, or their order" % (name, cls.__name__))
    for (field, ctype), (_, ctext) in zip(cls._fields_, header_fields):
        where = "%s.%s (%s in the header)" % (name, field, ctext)
        if ctext.endswith("*"):
            assert issubclass(ctype, (ctypes._Pointer, ctypes.c_void_p, ctypes.c_char_p)), where
        elif ctext in _SCALARS:
            assert ctype is _SCALARS[ctext], "%s is %s in ctypes" % (where, ctype.__name__)
        else:
            assert ctype is _lib.STRUCTS.get(ctext), "%s is %s in ctypes" % (where, ctype.__name__)
        desc = getattr(cls, field)
        assert (desc.offset, desc.size) == fields[field], (
            "%s: ctypes offset, size %s; the compiler's %s" % (where, (desc.offset, desc.size), fields[field]))
    assert ctypes.sizeof(cls) == size, "sizeof(%s)" % name
    assert ctypes.alignment(cls) == align, "_Alignof(%s)" % name


def test_result_size_v1_is_the_offset_of_diagnostics(layout):
    # GBS_RESULT_SIZE_V1 = offsetof(gbs_result, diagnostics): old callers pass it.
    _, sizes = layout
    assert sizes["gbs_result"][2]["diagnostics"][0] == _lib.CResult.diagnostics.offset


def test_diagnostics_fields_come_from_the_c_structs():
    assert Diagnostics._FIELDS == tuple(f for f, _ in _lib.CDiagnostics._fields_) + tuple(
        f for f, _ in _lib.CDiagnosticsExt._fields_ if f != "size")
    # The annotations (for type checkers) name the same fields.
    assert {k for k in Diagnostics.__annotations__ if not k.startswith("_")} == set(Diagnostics._FIELDS)


def test_codes_match_the_header(tmp_path):
    # The codes _lib.py passes in the option structs are the header's macros.
    want = {"GBS_METHOD_%s" % k.upper(): v for k, v in _lib.METHODS.items()}
    want.update({"GBS_ANNEAL_%s" % k.upper(): v for k, v in _lib.ANNEAL.items()})
    want.update({"GBS_DRAWS_%s" % k: getattr(_lib, "DRAWS_" + k) for k in ("CHAINS", "INDEPENDENT", "ENSEMBLE")})
    want.update({"GBS_GLOBAL_%s" % k: getattr(_lib, "GLOBAL_" + k) for k in ("DEFAULT", "ON", "OFF")})
    want.update({"GBS_KIND_%s" % v.upper(): k for k, v in _lib.KINDS.items()})
    want["GBS_WHERE_NONE"] = _lib.WHERE_NONE
    c, exe = tmp_path / "codes.c", tmp_path / "codes"
    c.write_text('#include <stdio.h>\n#include "gbs.h"\nint main(void) {\n%s  return 0;\n}\n' % "".join(
        '  printf("%s %%lld\\n", (long long)(%s));\n' % (n, n) for n in sorted(want)))
    subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-I", os.path.dirname(HEADER), "-o", str(exe), str(c)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert dict(zip(out[::2], map(int, out[1::2]))) == want
