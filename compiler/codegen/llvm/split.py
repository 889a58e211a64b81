"""A module's LLVM IR split into parts, one per kernel, compiled apart and linked when loaded.

    split_module(text, value_types) -> [part text, ...]

LLVM's optimisation and code generation of a module are a sum over its
functions, so the parts of a module can be compiled in parallel
(`workers.compile_parts`) and loaded into one execution engine, whose linker
resolves the references between them. A part is a kernel: a function and
the functions it calls directly that may be inlined into it (an entry
wrapper with its `func.func`, a trampoline with its parallel body, a
function with its GEMM range helpers); an outlined loop nest (`noinline`)
and a parallel body reached through a function pointer are parts of their
own. Inlining and each function's optimisation therefore see what they saw
in the whole module; only interprocedural facts across parts are lost
(attributes inferred for a callee in another part, constant arguments
propagated into it), which concerns calls between kernels, not their loops.

Each part holds its functions' definitions, declarations of the functions
and globals it uses from other parts, every function declaration, attribute
group and named metadata of the module, and the numbered metadata its
functions use (alias scopes). A global is defined in the first part that
uses it (or part 0), so writable state (arenas, the bounds and warning
globals) exists once; functions and globals used across parts lose their
internal linkage. The split depends only on the module text, so the parts,
and the machine code compiled from them, do not depend on how many
processes compile them. A module with a top-level line this does not know
stays one part.
"""

from __future__ import annotations

import re

__all__ = ["split_module"]

_NAME = r'@("[^"]*"|[-\w.$]+)'  # LLVM escapes a quote in a name (\22)
_REF = re.compile(_NAME)
_CALLEE = re.compile(_NAME + r"\(")  # in a body, only a called function is followed by its arguments
_METADATA = re.compile(r"!(\d+)")
_ATTRIBUTE_GROUP = re.compile(r"#(\d+)")
_LINKAGE = re.compile(r"^(@\S+ = )(?:internal |private )")
_DEFINE_LINKAGE = re.compile(r"^define (?:internal |private )")
_GLOBAL_KIND = re.compile(r" = (?:[a-z_]+ )*?(global|constant) ")
_ALIGN = re.compile(r", align \d+$")
_ATTACHMENTS = re.compile(r"(?: ![\w.]+ !\d+)+$")


class _Module:
    """The top-level entities of a module's text, as LLVM prints it."""

    def __init__(self, text: str):
        self.header: list[str] = []
        self.globals: dict[str, str] = {}
        self.functions: dict[str, list[str]] = {}
        self.declarations: list[str] = []
        self.attribute_groups: dict[int, str] = {}
        self.metadata: dict[int, str] = {}
        self.named_metadata: list[str] = []
        self.known = True
        """False when the text has a top-level line of another kind (comdats, aliases...)."""
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("define "):
                end = lines.index("}", i)
                self.functions[_REF.search(line[: line.index("(")]).group(1)] = lines[i : end + 1]
                i = end + 1
                continue
            if line.startswith("declare "):
                self.declarations.append(line)
            elif line.startswith("@") and " = " in line and _GLOBAL_KIND.search(line):
                self.globals[_REF.match(line).group(1)] = line
            elif line.startswith("attributes #"):
                self.attribute_groups[int(_ATTRIBUTE_GROUP.search(line).group(1))] = line
            elif (m := re.match(r"!(\d+) = ", line)) is not None:
                self.metadata[int(m.group(1))] = line
            elif line.startswith("!"):
                self.named_metadata.append(line)
            elif line.startswith(("target ", "source_filename")):
                self.header.append(line)
            elif line and not line.startswith(";"):
                self.known = False
            i += 1
        self.metadata_uses = {x: [int(y) for y in _METADATA.findall(line[line.index(" = ") :])]
                              for x, line in self.metadata.items()}

    def inlinable(self, name: str) -> bool:
        """Whether the defined function `name` may be inlined (is not `noinline`)."""
        define = self.functions[name][0]
        groups = _ATTRIBUTE_GROUP.findall(define[define.rindex(")") :])
        return not any("noinline" in self.attribute_groups.get(int(k), "") for k in groups)


def _kernels(m: _Module) -> tuple[list[list[str]], dict[str, set[str]], dict[str, set[int]]]:
    """The functions grouped into kernels (module order), and the names and
    the numbered metadata each function uses."""
    parent = {name: name for name in m.functions}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    uses: dict[str, set[str]] = {}
    metadata: dict[str, set[int]] = {}
    for name, lines in m.functions.items():
        body = "\n".join(lines[1:])
        uses[name] = set(_REF.findall(body))
        metadata[name] = set(map(int, _METADATA.findall("\n".join(lines))))  # the define line's attachments too
        for callee in _CALLEE.findall(body):
            if callee in m.functions and m.inlinable(callee):
                parent[root(callee)] = root(name)
    groups: dict[str, list[str]] = {}
    for name in m.functions:
        groups.setdefault(root(name), []).append(name)
    return list(groups.values()), uses, metadata


def _global_owners(m: _Module, owner: dict[str, int], uses: dict[str, set[str]]) -> dict[str, int]:
    """The part defining each global: the first part whose functions use it,
    else the part defining a global whose initialiser uses it, else part 0."""
    owners: dict[str, int] = {}
    for name, used in uses.items():
        for g in used & m.globals.keys():
            owners[g] = min(owners.get(g, owner[name]), owner[name])
    changed = True
    while changed:
        changed = False
        for g, line in m.globals.items():
            for r in _REF.findall(line[line.index(" = ") :]):
                if g in owners and r in m.globals and r not in owners:
                    owners[r] = owners[g]
                    changed = True
    return {g: owners.get(g, 0) for g in m.globals}


def _declare_function(define: str) -> str:
    text = _DEFINE_LINKAGE.sub("declare ", define) if _DEFINE_LINKAGE.match(define) else "declare " + define[len("define ") :]
    text = text[: -len(" {")] if text.endswith(" {") else text
    return _ATTACHMENTS.sub("", text)  # a declaration has no metadata


def _declare_global(line: str, value_type: str) -> str:
    name = line[: line.index(" = ")]
    kind = _GLOBAL_KIND.search(line).group(1)
    align = _ALIGN.search(line)
    return f"{name} = external {kind} {value_type}{align.group(0) if align else ''}"


def split_module(text: str, value_types: dict[str, str]) -> list[str]:
    """The parts of the module `text` (as LLVM prints it), one per kernel, in
    the order of their first functions; `value_types` gives each global's
    value type (`[4 x i8]`), for its declarations. [text] when the module has
    one kernel, a top-level line of an unknown kind or a global `value_types` lacks."""
    m = _Module(text)
    if not m.known or any(g.strip('"') not in value_types for g in m.globals):  # a name LLVM escaped, say
        return [text]
    kernels, uses, metadata = _kernels(m)
    if len(kernels) <= 1:
        return [text]
    owner = {name: k for k, kernel in enumerate(kernels) for name in kernel}
    global_owner = _global_owners(m, owner, uses)
    users: dict[str, set[int]] = {}
    for name, used in uses.items():
        for r in used:
            users.setdefault(r, set()).add(owner[name])
    for g, line in m.globals.items():
        for r in _REF.findall(line[line.index(" = ") :]):
            users.setdefault(r, set()).add(global_owner[g])
    home = {**owner, **global_owner}
    shared = {r for r, parts in users.items() if r in home and parts - {home[r]}}
    named = {int(x) for line in m.named_metadata for x in _METADATA.findall(line)}
    parts = []
    for k, kernel in enumerate(kernels):
        used = set().union(*(uses[name] for name in kernel))
        out = list(m.header)
        for g, line in m.globals.items():
            if global_owner[g] == k:
                out.append(_LINKAGE.sub(r"\1", line) if g in shared else line)
                used.update(_REF.findall(line[line.index(" = ") :]))
        for g, line in m.globals.items():
            if global_owner[g] != k and g in used:
                out.append(_declare_global(line, value_types[g.strip('"')]))
        out.extend(_declare_function(m.functions[f][0]) for f in sorted(used) if f in owner and owner[f] != k)
        for name in kernel:
            lines = m.functions[name]
            out.append(_DEFINE_LINKAGE.sub("define ", lines[0]) if name in shared else lines[0])
            out.extend(lines[1:])
        out.extend(m.declarations)
        out.extend(m.attribute_groups.values())
        out.extend(_metadata(m, set().union(named, *(metadata[name] for name in kernel))))
        out.extend(m.named_metadata)
        parts.append("\n".join(out) + "\n")
    return parts


def _metadata(m: _Module, used: set[int]) -> list[str]:
    """The numbered metadata `used` and what it uses, transitively, in number order."""
    need: set[int] = set()
    stack = list(used)
    while stack:
        x = stack.pop()
        if x in need or x not in m.metadata:
            continue
        need.add(x)
        stack.extend(m.metadata_uses[x])
    return [m.metadata[x] for x in sorted(need)]
