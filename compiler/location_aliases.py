"""Debug locations printed with aliases (`as_text(debug_info=True)` in JAX,
`-mlir-print-debuginfo` in MLIR): `%0 = ... loc(#loc14)` with `#loc14 =
loc("jit(f)/sin"(#loc10))` and so on defined after their use, which xDSL
cannot read. `resolve_locations` rewrites such text so that each op keeps the
one location dfc uses, a `"file":line:col`.
"""

from __future__ import annotations

import re

_LOCATION_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)[ \t]*$", re.MULTILINE)
_FILE_OR_ALIAS = re.compile(r'"[^"\n]*":\d+:\d+|#loc\d*\b')


def _closing_paren(text: str, start: int) -> int | None:
    """The index of the `)` closing the `(` at `start`, skipping string
    literals; None if there is none (the parser then reports the syntax error)."""
    depth, k = 0, start
    while k < len(text):
        c = text[k]
        if c == '"':
            k = text.find('"', k + 1)
            if k < 0:
                return None
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return k
        k += 1
    return None


def resolve_locations(text: str) -> str:
    """`text` with JAX's debug locations made plain: each `loc(...)` becomes
    the first file position it leads to through the `#loc` aliases (the
    innermost frame of a call site, as `as_text(debug_info=True)` nests them),
    `loc("file":line:col)`; locations without one, and the alias definitions
    (which xDSL cannot read after their uses), are removed, keeping line numbers."""
    aliases = {m.group(1): m.group(2) for m in _LOCATION_ALIAS.finditer(text)}

    def position(body: str, seen: frozenset[str]) -> str | None:
        for m in _FILE_OR_ALIAS.finditer(body):
            token = m.group(0)
            if not token.startswith("#"):
                return token
            if token in aliases and token not in seen and (found := position(aliases[token], seen | {token})):
                return found
        return None

    text = _LOCATION_ALIAS.sub("", text)
    out: list[str] = []
    done = 0
    for m in re.finditer(r"(?<![\w#.])loc\(", text):
        if m.start() < done:
            continue
        end = _closing_paren(text, m.end() - 1)
        if end is None:
            break
        found = position(text[m.end():end], frozenset())
        out.append(text[done:m.start()].rstrip(" \t"))
        out.append(f" loc({found})" if found else "")
        done = end + 1
    out.append(text[done:])
    return "".join(out)


def has_location_aliases(text: str) -> bool:
    """Whether `text` defines `#loc` aliases (then `resolve_locations` is needed)."""
    return _LOCATION_ALIAS.search(text) is not None
