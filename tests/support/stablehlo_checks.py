"""Running StableHLO modules in the style of the spec's interpreter tests (`stablehlo/tests/interpret`).

`translate_checks` turns a case's `check.expect_*` ops into returned (value, expected value) pairs,
`verdict` runs it with the interpreter and compares them as the spec's check dialect does, `dense`
writes a NumPy array as a dense literal.
"""

from __future__ import annotations

import re

import numpy as np

from dfc import interpret
from dfc.importers.stablehlo_import import import_stablehlo

DEFAULT_TOLERANCE = 1e-4
"""The check dialect's default for `expect_almost_eq` (an absolute difference)."""

_CHECK = re.compile(r"check\.(expect_\w+)\s+(%[\w#]+)\s*,\s*")
_VALUE = re.compile(r"%[\w#]+")
_TOLERANCE = re.compile(r"\s*(?:,\s*tolerance\s*=\s*|\{\s*tolerance\s*=\s*)([-+.\w]+)(?:\s*:\s*f64\s*\})?")
_FUNC = re.compile(r"func\.func\s+(?:public\s+|private\s+)?@([\w.]+)\s*\(([^)]*)\)\s*(->[^{]*)?\{")
_BARE_RETURN = re.compile(r"func\.return\s*(?=\n|\}|$)")


class NotTranslated(Exception):
    """A case this translation does not handle (no checks, or a check other than the four)."""


def _balanced(text: str, i: int) -> int:
    """The end of the `<...>`/`(...)`-balanced item starting at `text[i]`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] in "<([{":
            depth += 1
        elif text[j] in ">)]}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def _type(text: str, i: int) -> tuple[str, int]:
    """The type starting at (or after blanks from) `i`, and its end."""
    i = re.compile(r"\s*").match(text, i).end()
    j = re.compile(r"[\w!.]*").match(text, i).end()
    if text[j:j + 1] == "<":
        j = _balanced(text, j)
    return text[i:j], j


def translate_checks(case: str) -> tuple[str, str, list[tuple[str, float]]]:
    """`case` (one function with checks, and any functions it calls) as a module whose
    checked function returns each checked value followed by its expected value;
    with that function's name and each check's (kind, tolerance)."""
    pieces, values, types, checks, pos = [], [], [], [], 0
    for m in _CHECK.finditer(case):
        kind, lhs, i = m.group(1), m.group(2), m.end()
        if kind in ("expect_eq_const", "expect_almost_eq_const"):
            start = i
            i = _balanced(case, case.index("<", i))
            attr = case[start:i]
            i = re.compile(r"\s*:").match(case, i).end()
            ty, i = _type(case, i)
            rhs, replacement = f"%check_expected{len(checks)}", ""
            replacement = f"{rhs} = stablehlo.constant {attr} : {ty}"
        elif kind in ("expect_eq", "expect_almost_eq"):
            rhs_match = _VALUE.match(case, i)
            rhs, i, replacement = rhs_match.group(0), rhs_match.end(), ""
        else:
            raise NotTranslated(f"check.{kind}")
        tolerance = _TOLERANCE.match(case, i)
        if tolerance:
            i = tolerance.end()
        if not kind.endswith("_const"):
            i = re.compile(r"\s*:").match(case, i).end()
            ty, i = _type(case, i)
        checks.append((kind.removesuffix("_const"), float(tolerance.group(1)) if tolerance else DEFAULT_TOLERANCE))
        values += [lhs, rhs]
        types += [ty, ty]
        pieces.append(case[pos:m.start()] + replacement)
        pos = i
    if not checks:
        raise NotTranslated("no checks")
    pieces.append(case[pos:])
    text = "".join(pieces)
    head = [h for h in _FUNC.finditer(text) if h.start() < len(pieces[0])][-1]
    if head.group(3):
        raise NotTranslated("the checked function has results")
    signature = f"{head.group(0)[:-1].rstrip()} -> ({', '.join(types)}) {{"
    text = text[:head.start()] + signature + text[head.end():]
    ret = _BARE_RETURN.search(text, head.start() + len(signature))
    text = f"{text[:ret.start()]}func.return {', '.join(values)} : {', '.join(types)}\n{text[ret.end():]}"
    return text, head.group(1), checks


def _almost_equal(got: np.ndarray, want: np.ndarray, tolerance: float) -> bool:
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        near = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= tolerance)
    return bool(np.all((g == w) | (np.isnan(g) & np.isnan(w)) | near))


def verdict(case: str) -> str:
    """'pass', or why `case` fails: 'wrong: ...' or an exception other than a CompileError
    (a refusal, which propagates)."""
    text, name, checks = translate_checks(case)
    module = import_stablehlo(text)
    got = interpret(module, name)
    got = got if isinstance(got, tuple) else (got,)
    for k, (kind, tolerance) in enumerate(checks):
        a, b = np.asarray(got[2 * k]), np.asarray(got[2 * k + 1])
        same = a.shape == b.shape and (_almost_equal(a, b, tolerance) if kind == "expect_almost_eq"
                                       else np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
        if not same:
            return f"wrong: check {k} of @{name}: got {a.ravel()[:8]}, want {b.ravel()[:8]}"
    return "pass"


def dense(x: np.ndarray) -> str:
    """`x` as a dense elements attribute with its tensor type (f64, f32, i64, i32, i8, ui64, ui32, ui8, i1)."""
    x = np.asarray(x)
    element = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32", "int8": "i8", "uint64": "ui64",
               "uint32": "ui32", "uint8": "ui8", "bool": "i1"}[x.dtype.name]

    def item(v) -> str:
        if x.dtype == np.bool_:
            return "true" if v else "false"
        if x.dtype.kind == "f" and not np.isfinite(v):
            return f"0x{np.float64(v).view(np.uint64):016X}"
        return f"{float(v):.9e}" if x.dtype == np.float32 else f"{float(v):.17e}" if x.dtype.kind == "f" else str(int(v))

    def nested(a) -> str:
        return item(a) if a.ndim == 0 else f"[{', '.join(nested(s) for s in a)}]"

    shape = "x".join(map(str, x.shape)) + "x" if x.ndim else ""
    return f"dense<{nested(x)}> : tensor<{shape}{element}>"
