"""Stan programs read at the level ln Z needs: the blocks, the statements
of the model block, and the ``~`` statements that drop constants.

A Stan ``~`` statement adds its distribution's log density *up to a
constant* (the terms that depend on no parameter are dropped), and so do
the ``_lupdf`` / ``_lupmf`` calls; ``target += normal_lpdf(y | mu, s)``
keeps every term. Sampling does not care; ln Z does: for
``mu ~ normal(0, 2); y ~ normal(mu, 1);`` with 12 data points the
evidence of the ``~`` form is off by 12 * 0.919 + 1.612 nats.

:func:`rewrite` returns a copy of a program in which each ``~`` statement
of the model block (and of ``_lp`` functions, which may hold them too) is
the equivalent ``target += <dist>_lpdf(lhs | args);`` (``_lpmf`` for a
discrete family) and each ``_lupdf``/``_lupmf`` call there is the
``_lpdf``/``_lpmf`` one. Everything else of the program is copied byte for
byte, comments and layout included. What cannot be rewritten safely (a
truncation ``T[,]``, a distribution whose suffix is unknown, an
``#include`` gbs cannot see) raises :class:`StanProgramError`, which names
the statement and shows its ``target +=`` form.

The lexer follows Stan's lexical grammar (comments ``//``, ``/* */`` and
the old ``#``, string literals, numbers, identifiers, operators); the
parser knows Stan's statement forms (blocks, ``for``, ``while``, ``if`` /
``else``, ``profile``, simple statements ending at ``;``), so a ``~`` in a
comment or a string, a statement over several lines, or one nested in
loops and branches is read as Stan reads it.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

__all__ = ["StanProgramError", "Rewrite", "rewrite", "parameter_names", "tokenize",
           "DISCRETE", "CONTINUOUS"]

# Stan's built-in distributions by the suffix of their log density
# (``stanc --dump-stan-math-distributions``; tests/python/test_stan_program.py
# compares these with the stanc that PyStan ships). A family missing here
# is reported, with both forms, rather than guessed.
DISCRETE = frozenset({
    "bernoulli", "bernoulli_logit", "bernoulli_logit_glm", "beta_binomial", "beta_neg_binomial",
    "binomial", "binomial_logit", "binomial_logit_glm", "categorical", "categorical_logit",
    "categorical_logit_glm", "dirichlet_multinomial", "discrete_range", "hypergeometric",
    "multinomial", "multinomial_logit", "neg_binomial", "neg_binomial_2", "neg_binomial_2_log",
    "neg_binomial_2_log_glm", "ordered_logistic", "ordered_logistic_glm", "ordered_probit",
    "poisson", "poisson_log", "poisson_log_glm",
})
CONTINUOUS = frozenset({
    "beta", "beta_proportion", "cauchy", "chi_square", "dirichlet", "double_exponential",
    "exp_mod_normal", "exponential", "frechet", "gamma", "gaussian_dlm_obs", "gumbel",
    "inv_chi_square", "inv_gamma", "inv_wishart", "inv_wishart_cholesky", "lkj_corr",
    "lkj_corr_cholesky", "lkj_cov", "logistic", "loglogistic", "lognormal", "multi_gp",
    "multi_gp_cholesky", "multi_normal", "multi_normal_cholesky", "multi_normal_prec",
    "multi_student_t", "multi_student_t_cholesky", "normal", "normal_id_glm", "pareto",
    "pareto_type_2", "rayleigh", "scaled_inv_chi_square", "skew_double_exponential",
    "skew_normal", "std_normal", "student_t", "uniform", "von_mises", "weibull", "wiener",
    "wishart", "wishart_cholesky",
})

BLOCKS = ("functions", "data", "transformed data", "parameters", "transformed parameters",
          "model", "generated quantities")


class StanProgramError(ValueError):
    """A Stan program that gbs cannot read or rewrite safely. The message
    names each statement (line and text) and shows the ``target +=``
    form to write instead.

    Attributes
    ----------
    statements : list of (int, str, str)
        (line, statement as written, suggested replacement) for each
        statement that could not be rewritten (empty for a program gbs
        could not read at all).
    """

    def __init__(self, message: str, statements: Sequence[Tuple[int, str, str]] = ()):
        super().__init__(message)
        self.statements = list(statements)


@dataclasses.dataclass(frozen=True)
class Token:
    kind: str  # "ident", "number", "string", "op", "include"
    text: str
    start: int  # offsets in the program text
    end: int


_LEXEMES = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<include>\#include[^\n]*)
  | (?P<oldcomment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?i?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\*=|\./=|%/%|\+=|-=|\*=|/=|\.\*|\./|\.\^|==|!=|<=|>=|&&|\|\|
           |[-+*/%^'!<>=?:|~,;()\[\]{}.\\])
""", re.VERBOSE | re.DOTALL)


def tokenize(code: str) -> List[Token]:
    """Stan's tokens of ``code``, comments and white space left out."""
    out: List[Token] = []
    pos, n = 0, len(code)
    while pos < n:
        if code.startswith("/*", pos) and code.find("*/", pos + 2) < 0:
            raise StanProgramError("the program has a /* comment that is never closed (line %d)"
                                   % _line(code, pos))
        m = _LEXEMES.match(code, pos)
        if m is None:
            raise StanProgramError("the program has a character Stan does not accept, %r, at line "
                                   "%d" % (code[pos], _line(code, pos)))
        kind = m.lastgroup or ""
        if kind not in ("space", "comment", "oldcomment"):
            out.append(Token(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return out


def _line(code: str, pos: int) -> int:
    return code.count("\n", 0, pos) + 1


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _match_brackets(code: str, toks: Sequence[Token]) -> Dict[int, int]:
    """Token index of each bracket -> index of its partner."""
    match: Dict[int, int] = {}
    stack: List[int] = []
    for i, t in enumerate(toks):
        if t.kind != "op":
            continue
        if t.text in _OPEN:
            stack.append(i)
        elif t.text in _CLOSE:
            if not stack or toks[stack[-1]].text != _CLOSE[t.text]:
                raise StanProgramError("the program's brackets do not pair up: %r at line %d"
                                       % (t.text, _line(code, t.start)))
            j = stack.pop()
            match[i], match[j] = j, i
    if stack:
        t = toks[stack[-1]]
        raise StanProgramError("the program's brackets do not pair up: %r at line %d is never closed"
                               % (t.text, _line(code, t.start)))
    return match


class _Program:
    """The tokens of a program, its blocks and the statements gbs cares
    about."""

    def __init__(self, code: str):
        self.code = code
        self.toks = tokenize(code)
        self.match = _match_brackets(code, self.toks)
        self.blocks: Dict[str, Tuple[int, int]] = {}  # name -> token indices of "{" and "}"
        i, toks = 0, self.toks
        while i < len(toks):
            if toks[i].kind == "include":
                i += 1
                continue
            j = i
            while j < len(toks) and toks[j].kind == "ident":
                j += 1
            name = " ".join(t.text for t in toks[i:j])
            if j >= len(toks) or toks[j].text != "{" or name not in BLOCKS:
                t = toks[min(j, len(toks) - 1)]
                raise StanProgramError("gbs cannot read the program's blocks at line %d (%r): "
                                       "expected one of %s" % (_line(code, t.start), t.text,
                                                               ", ".join(BLOCKS)))
            self.blocks[name] = (j, self.match[j])
            i = self.match[j] + 1
        self.includes = [t for t in toks if t.kind == "include"]

    def text(self, a: int, b: int) -> str:
        """The source of tokens a..b inclusive, as written."""
        return self.code[self.toks[a].start:self.toks[b].end]

    def statement(self, i: int, end: int, simple: List[Tuple[int, int]]) -> int:
        """Parse the statement at token i (before token ``end``); append
        each simple statement's (first, ";") token indices to ``simple``;
        return the index after it."""
        toks, match = self.toks, self.match
        t = toks[i]
        if t.text == "{":
            self.statements(i + 1, match[i], simple)
            return match[i] + 1
        if t.kind == "ident" and t.text in ("for", "while", "if", "profile") and \
                i + 1 < end and toks[i + 1].text == "(":
            k = self.statement(match[i + 1] + 1, end, simple)
            if t.text == "if" and k < end and toks[k].text == "else":
                k = self.statement(k + 1, end, simple)
            return k
        k = i
        while k < end and toks[k].text != ";":
            if toks[k].text in _OPEN:
                k = match[k]
            k += 1
        if k >= end:
            raise StanProgramError("gbs cannot read the statement at line %d (%s): no ';' before "
                                   "the end of its block" % (_line(self.code, t.start),
                                                             _squeeze(self.text(i, end - 1))))
        simple.append((i, k))
        return k + 1

    def statements(self, i: int, end: int, simple: List[Tuple[int, int]]) -> None:
        while i < end:
            i = self.statement(i, end, simple)

    def functions(self) -> List[Tuple[str, Optional[Tuple[int, int]]]]:
        """(name, body's "{" "}" token indices or None) of each function
        of the functions block (None for a forward declaration)."""
        if "functions" not in self.blocks:
            return []
        a, b = self.blocks["functions"]
        toks, match = self.toks, self.match
        out: List[Tuple[str, Optional[Tuple[int, int]]]] = []
        i = a + 1
        while i < b:
            k = i
            while k < b and toks[k].text not in ("{", ";"):
                if toks[k].text in ("(", "["):
                    k = match[k]
                k += 1
            if k >= b or toks[k - 1].text != ")" or toks[match[k - 1] - 1].kind != "ident":
                t = toks[min(k, b - 1)]
                raise StanProgramError("gbs cannot read the function defined at line %d of the "
                                       "functions block" % _line(self.code, t.start))
            name = toks[match[k - 1] - 1].text
            if toks[k].text == ";":
                out.append((name, None))
                i = k + 1
            else:
                out.append((name, (k, match[k])))
                i = match[k] + 1
        return out

    def _close_angle(self, j: int, k: int) -> int:
        """Index of the ">" closing the constraint list opened at j."""
        while j < k and self.toks[j].text != ">":
            if self.toks[j].text in _OPEN:
                j = self.match[j]
            j += 1
        return j

    def declared_names(self, block: str) -> List[str]:
        """The variables a declarations-only block declares, in order."""
        if block not in self.blocks:
            return []
        a, b = self.blocks[block]
        simple: List[Tuple[int, int]] = []
        self.statements(a + 1, b, simple)
        names = []
        for i, k in simple:
            # The name is the last identifier outside brackets before "="
            # or ";": `vector<lower=0>[N] sigma;`, `real theta[J];` (old).
            last = None
            j = i
            while j < k and self.toks[j].text != "=":
                t = self.toks[j]
                if t.text in _OPEN:
                    j = self.match[j]
                elif t.text == "<" and j > i and self.toks[j - 1].kind == "ident":
                    j = self._close_angle(j, k)  # <lower=0, upper=1>
                elif t.kind == "ident":
                    last = t.text
                j += 1
            if last is not None:
                names.append(last)
        return names


def _squeeze(s: str) -> str:
    """A statement on one line, for messages."""
    return " ".join(s.split())


@dataclasses.dataclass
class Rewrite:
    """What :func:`rewrite` changed.

    Attributes
    ----------
    code : str
        The program with every ``~`` statement as ``target +=`` and every
        ``_lupdf``/``_lupmf`` call as ``_lpdf``/``_lpmf`` (the input
        unchanged if there were none).
    statements : list of (int, str, str)
        (line, statement as written, its replacement) of each ``~``
        statement rewritten.
    calls : list of (int, str, str)
        (line, old name, new name) of each ``_lupdf``/``_lupmf`` call renamed.
    """

    code: str
    statements: List[Tuple[int, str, str]]
    calls: List[Tuple[int, str, str]]

    @property
    def changed(self) -> bool:
        return bool(self.statements or self.calls)


def rewrite(code: str) -> Rewrite:
    """The program ``code`` with the constants of its log density kept:
    see the module's docstring. Raises :class:`StanProgramError` for a
    statement that cannot be rewritten safely (all of them named at once)."""
    prog = _Program(code)
    toks = prog.toks
    user: Dict[str, Set[str]] = {}  # distribution name -> {"_lpdf", "_lpmf"}
    regions: List[Tuple[int, int]] = []  # token ranges whose statements add to target
    for name, body in prog.functions():
        for kind in ("_lpdf", "_lpmf"):
            if name.endswith(kind):
                user.setdefault(name[:-len(kind)], set()).add(kind)
        if body is not None and name.endswith("_lp"):
            regions.append(body)
    if "model" in prog.blocks:
        regions.append(prog.blocks["model"])
    if prog.includes and regions:
        t = prog.includes[0]
        raise StanProgramError(
            "the program has an #include (line %d, %s): gbs cannot read the included file for `~` "
            "statements, whose dropped constants ln Z needs; paste its text into the program"
            % (_line(code, t.start), t.text.strip()))

    simple: List[Tuple[int, int]] = []
    for a, b in regions:
        prog.statements(a + 1, b, simple)

    # _lupdf / _lupmf calls -> _lpdf / _lpmf, wherever they are in those regions.
    renames: Dict[int, str] = {}
    for a, b in regions:
        for j in range(a + 1, b):
            t = toks[j]
            if t.kind == "ident" and t.text.endswith(("_lupdf", "_lupmf")) and \
                    j + 1 < len(toks) and toks[j + 1].text == "(":
                renames[j] = t.text[:-6] + "_l" + t.text[-3:]  # _lupdf -> _lpdf

    def render(a: int, b: int) -> str:
        """Source of tokens a..b with the renames inside applied."""
        parts, pos = [], toks[a].start
        for j in range(a, b + 1):
            if j in renames:
                parts += [code[pos:toks[j].start], renames[j]]
                pos = toks[j].end
        parts.append(code[pos:toks[b].end])
        return "".join(parts)

    edits: List[Tuple[int, int, str]] = []  # (start, end, text) in the source
    done: Set[int] = set()  # renamed tokens inside rewritten statements
    statements: List[Tuple[int, str, str]] = []
    problems: List[Tuple[int, str, str, str]] = []  # (line, statement, fix, why)
    for i, k in simple:
        tilde = _depth0(prog, i, k, "~")
        if tilde is None:
            continue
        line = _line(code, toks[i].start)
        written = _squeeze(prog.text(i, k))
        if tilde == i or not (tilde + 2 < k and toks[tilde + 1].kind == "ident"
                              and toks[tilde + 2].text == "("):
            raise StanProgramError("gbs cannot read the `~` statement at line %d: %s"
                                   % (line, written))
        dist = toks[tilde + 1].text
        close = prog.match[tilde + 2]
        lhs = render(i, tilde - 1)
        args = _inside(prog, tilde + 2, close, render)
        trunc = None
        if close + 1 < k and toks[close + 1].text == "T" and toks[close + 2].text == "[":
            trunc = (close + 3, prog.match[close + 2])
            after = prog.match[close + 2] + 1
        else:
            after = close + 1
        if after != k:
            raise StanProgramError("gbs cannot read the `~` statement at line %d: %s"
                                   % (line, written))
        suffixes = user.get(dist)
        if suffixes is not None and len(suffixes) == 1:
            suffix: Optional[str] = next(iter(suffixes))
        elif suffixes is None and dist in DISCRETE:
            suffix = "_lpmf"
        elif suffixes is None and dist in CONTINUOUS:
            suffix = "_lpdf"
        else:
            suffix = None
        if suffix is None:
            why = ("%s is defined both as %s_lpdf and %s_lpmf in the functions block"
                   % (dist, dist, dist) if suffixes else
                   "%s is neither one of Stan's built-in distributions gbs knows nor defined in "
                   "the functions block, so gbs cannot tell a density (_lpdf) from a mass "
                   "function (_lpmf)" % dist)
            fix = "%s\n    or\n    %s" % (_target(dist, "_lpdf", lhs, args),
                                           _target(dist, "_lpmf", lhs, args))
            problems.append((line, written, fix, why))
            continue
        if trunc is not None:
            fix, why = _truncation_fix(prog, dist, suffix, lhs, args, trunc)
            problems.append((line, written, fix, why))
            continue
        new = _target(dist, suffix, lhs, args)
        edits.append((toks[i].start, toks[k].end, new))
        done.update(j for j in renames if i <= j <= k)
        statements.append((line, written, new))
    if problems:
        raise StanProgramError(_problems_message(problems),
                               [(line, w, fix) for line, w, fix, _ in problems])
    calls = []
    for j, new in sorted(renames.items()):
        if j not in done:
            edits.append((toks[j].start, toks[j].end, new))
        calls.append((_line(code, toks[j].start), toks[j].text, new))
    edits.sort()
    out, pos = [], 0
    for a, b, text in edits:
        out += [code[pos:a], text]
        pos = b
    out.append(code[pos:])
    return Rewrite("".join(out), statements, calls)


def _inside(prog: _Program, a: int, b: int, render: Callable[[int, int], str]) -> str:
    """What is between the brackets at tokens a and b, comments included
    (a line comment keeps its newline), white space at the ends trimmed."""
    code, toks = prog.code, prog.toks
    if b == a + 1:
        return ""
    head = code[toks[a].end:toks[a + 1].start].strip()
    tail = code[toks[b - 1].end:toks[b].start]
    tail = tail.lstrip(" \t") if "//" in tail else tail.strip()
    return ((head + " ") if head else "") + render(a + 1, b - 1) + \
        ((" " + tail) if tail.strip() else "")


def _depth0(prog: _Program, i: int, k: int, op: str) -> Optional[int]:
    """Index of the first token ``op`` outside brackets in tokens i..k."""
    j = i
    while j <= k:
        t = prog.toks[j]
        if t.text in _OPEN:
            j = prog.match[j]
        elif t.kind == "op" and t.text == op:
            return j
        j += 1
    return None


def _target(dist: str, suffix: str, lhs: str, args: str) -> str:
    if args.strip():
        return "target += %s%s(%s | %s);" % (dist, suffix, lhs, args)
    return "target += %s%s(%s);" % (dist, suffix, lhs)


def _call(dist: str, suffix: str, first: str, args: str) -> str:
    return "%s%s(%s | %s)" % (dist, suffix, first, args) if args.strip() else \
        "%s%s(%s)" % (dist, suffix, first)


def _truncation_fix(prog: _Program, dist: str, suffix: str, lhs: str, args: str,
                    bounds: Tuple[int, int]) -> Tuple[str, str]:
    """The ``target +=`` form of ``lhs ~ dist(args) T[L, U]``: the density
    minus the log of the mass between the bounds (for a discrete family
    the lower bound L is included, so the mass below it is up to L - 1)."""
    a, b = bounds
    comma = _depth0(prog, a, b - 1, ",") if b > a else None
    if comma is None:
        raise StanProgramError("gbs cannot read the truncation T[...] at line %d"
                               % _line(prog.code, prog.toks[a - 2].start))
    lo = prog.text(a, comma - 1).strip() if comma > a else ""
    hi = prog.text(comma + 1, b - 1).strip() if b - 1 > comma else ""
    if suffix == "_lpmf" and lo:
        lo = str(int(lo) - 1) if re.fullmatch(r"-?\d+", lo) else "%s - 1" % lo
    density = _call(dist, suffix, lhs, args)
    if lo and hi:
        norm = "log_diff_exp(%s, %s)" % (_call(dist, "_lcdf", hi, args), _call(dist, "_lcdf", lo, args))
    elif lo:
        norm = _call(dist, "_lccdf", lo, args)
    elif hi:
        norm = _call(dist, "_lcdf", hi, args)
    else:
        return "target += %s;" % density, "an empty truncation T[ , ]"
    fix = "target += %s - %s;" % (density, norm)
    why = ("a truncated `~` statement drops constants ln Z needs, and gbs does not write the "
           "truncation's normalization for you (it is subtracted once per element of the "
           "left-hand side, and bounds may be vectors)")
    return fix, why


def _problems_message(problems: Sequence[Tuple[int, str, str, str]]) -> str:
    parts = ["gbs.from_stan: the model's `~` statements drop constants of the log density that "
             "ln Z needs, and %s cannot be rewritten safely. Write %s with `target +=` (below), "
             "then build and sample the program again:"
             % ("this statement" if len(problems) == 1 else "these statements",
                "it" if len(problems) == 1 else "them")]
    for line, written, fix, why in problems:
        parts.append("  line %d: %s\n    (%s)\n    %s" % (line, written, why, fix))
    return "\n".join(parts)


def parameter_names(code: str) -> List[str]:
    """The variables of the program's parameters block, in order."""
    return _Program(code).declared_names("parameters")
