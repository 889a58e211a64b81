"""Mutations for `fuzz_opt_tool`: ways to damage a valid MLIR input and its
pass flags, each a function of the text and a seeded `random.Random`.

Text mutations work on tokens (runs of non-space characters) and lines, so
that most results still look like MLIR and reach the verifier and the passes,
not only the lexer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

TOKEN = re.compile(r"\S+")
NUMBER = re.compile(r"(?<![%@\w.])-?\d+(\.\d+)?(e[+-]?\d+)?")
TYPES = ("f16", "bf16", "f32", "f64", "f80", "f128", "i1", "i8", "i32", "i64", "index", "none", "complex<f32>")
TYPE = re.compile(r"\b(f16|bf16|f32|f64|i1|i8|i32|i64|index)\b")
NUMBERS = ("0", "-1", "1", "2", "3", "7", "-7", "65536", "2147483648", "4294967296", "9223372036854775807",
           "-9223372036854775808", "18446744073709551616", "100000000000000000000", "1.0e308", "1.0e400",
           "nan", "0x7FF8000000000000", "-0.0")
PUNCTUATION = "{}()[]<>%@^:,=#!?\"x-+*"


def _replace_match(text: str, pattern: re.Pattern[str], rng: random.Random, choices: Sequence[str]) -> str:
    found = list(pattern.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start()] + rng.choice(choices) + text[m.end() :]


def _tokens(text: str) -> list[re.Match[str]]:
    return list(TOKEN.finditer(text))


def swap_tokens(text: str, rng: random.Random) -> str:
    toks = _tokens(text)
    if len(toks) < 2:
        return text
    a, b = sorted(rng.sample(range(len(toks)), 2))
    ta, tb = toks[a], toks[b]
    return text[: ta.start()] + tb.group() + text[ta.end() : tb.start()] + ta.group() + text[tb.end() :]


def delete_token(text: str, rng: random.Random) -> str:
    toks = _tokens(text)
    if not toks:
        return text
    t = rng.choice(toks)
    return text[: t.start()] + text[t.end() :]


def duplicate_token(text: str, rng: random.Random) -> str:
    toks = _tokens(text)
    if not toks:
        return text
    t, at = rng.choice(toks), rng.choice(toks)
    return text[: at.start()] + t.group() + " " + text[at.start() :]


def delete_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
    return "".join(lines)


def move_line(text: str, rng: random.Random) -> str:
    """Moves a line, which often makes a value used before its definition."""
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text
    line = lines.pop(rng.randrange(len(lines)))
    lines.insert(rng.randrange(len(lines) + 1), line)
    return "".join(lines)


def perturb_number(text: str, rng: random.Random) -> str:
    return _replace_match(text, NUMBER, rng, NUMBERS)


def swap_type(text: str, rng: random.Random) -> str:
    return _replace_match(text, TYPE, rng, TYPES)


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def insert_punctuation(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(PUNCTUATION) + text[at:]


def unterminated_string(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    body = "".join(rng.choice("ab\\ ") for _ in range(rng.randrange(1, 60)))
    return text[:at] + '"' + body + text[at:]


KEYWORD_ITEM = re.compile(r"(?<![%#^@\w.])[a-z_]\w* = (\[[^\]\n]*\](?: ?x ?\[[^\]\n]*\])?|\{[^}\n]*\}|-?\d+|[A-Za-z_]\w*)")
ODD_VALUES = ("5", "-1", "nan", "true", "[]", "[x]", "[[1]]", "[1, 2] x [3]", "[1] x 2", "{a = 1}", "{}",
              "[[1, 2], [3]]", "[true]", "99999999999999999999", "1.5", "\"s\"", "[1.5]", "[{a = 1}]", "unit")


def swap_keyword_value(text: str, rng: random.Random) -> str:
    """The value of a `key = value` item (custom op syntax such as StableHLO's
    `dims = [..]`, attribute and property fields) replaced by a value of
    another shape: a word, a list, a pair, a dictionary, a float."""
    found = list(KEYWORD_ITEM.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start(1)] + rng.choice(ODD_VALUES) + text[m.end(1) :]


MUTATIONS: tuple[Callable[[str, random.Random], str], ...] = (
    swap_tokens, delete_token, duplicate_token, delete_line, duplicate_line, move_line,
    perturb_number, perturb_number, swap_type, swap_type, truncate, insert_punctuation,
    unterminated_string, swap_keyword_value,
)


def retype_everywhere(text: str, rng: random.Random) -> str:
    """Every occurrence of one type replaced by another (`tensor<4xf32>` too):
    the program often stays valid and reaches the passes with other types."""
    present = sorted({m.group() for m in TYPE.finditer(text)} | set(re.findall(r"(?<=\dx)(?:f16|f32|f64|i1|i8|i32|i64|index)\b", text)))
    if not present:
        return text
    old, new = rng.choice(present), rng.choice(TYPES)
    return re.sub(rf"(?<![\w.%@]){old}\b|(?<=\dx){old}\b", new, text)


def resize_everywhere(text: str, rng: random.Random) -> str:
    """Every standalone occurrence of one integer (shapes, bounds, constants)
    replaced by a small or odd one, so that shapes stay consistent."""
    present = sorted(set(re.findall(r"(?<![\w.%@#+-])\d+(?![\w.])|(?<=[<x])\d+(?=x)", text)))
    if not present:
        return text
    old = rng.choice(present)
    new = rng.choice(("0", "1", "2", "3", "5", "7", "17", "64", "1000", "1048576", "2147483648", "1099511627776"))
    return re.sub(rf"(?<![\w.%@#+-]){old}(?![\w.])|(?<=[<x]){old}(?=x)", new, text)


SEMANTIC: tuple[Callable[[str, random.Random], str], ...] = (
    perturb_number, swap_type, move_line, delete_line, retype_everywhere, retype_everywhere,
    resize_everywhere, resize_everywhere, swap_keyword_value,
)
"""Mutations that mostly keep the syntax, so that the result reaches the verifiers and passes."""


def mutate_text(text: str, rng: random.Random) -> bytes:
    """`text` with one to three mutations (a third of the time only `SEMANTIC`
    ones), occasionally with bytes that are not UTF-8."""
    kinds = SEMANTIC if rng.random() < 0.33 else MUTATIONS
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(kinds)(text, rng)
    data = text.encode()
    if rng.random() < 0.03:
        at = rng.randrange(len(data) + 1)
        data = data[:at] + bytes([rng.choice((0x80, 0xC3, 0xFF, 0xFE))]) + data[at:]
    return data


PASS_OPTIONS: dict[str, tuple[str, ...]] = {
    "autodiff": ("", "{wrt=0}", "{wrt=1}", "{wrt=0,1}", "{split=true}", "{recompute=true}", "{wrt=7}",
                 "{func=f}", "{func=nope}"),
    "lower-dataflow": ("", "{threads=1}", "{threads=4}", "{threads=0}", "{threads=-1}", "{target=gpu}",
                       "{target=tpu}", "{parallel_threshold=1}", "{parallel_threshold=-5}"),
    "mem-plan": ("", "{stack_limit=0}", "{stack_limit=-1}", "{print-stats=true}", "{stack_limit=99999999999999999999}"),
    "fuse": ("", "{expand=false}"),
}
PASSES = ("expand-library", "canonicalize", "cse", "dce", "licm", "scatter-to-gather", "fuse", "bufferize",
          "check-bounds", "contraction-to-blas", "fuse-gemm-gather", "fuse-gemm-epilogue", "fuse-outer",
          "lower-dataflow", "reuse-sibling-loops", "mem-plan", "autodiff", "convert-stablehlo", "default")


def random_pass(rng: random.Random) -> str:
    name = rng.choice(PASSES)
    return name + rng.choice(PASS_OPTIONS.get(name, ("",)))


def mutate_flags(flags: Sequence[str], rng: random.Random) -> list[str]:
    """`flags` with passes added, dropped or replaced, or an opt level or target added."""
    flags = list(flags)
    roll = rng.random()
    if roll < 0.35:
        flags.insert(rng.randrange(len(flags) + 1), "--" + random_pass(rng))
    elif roll < 0.5 and flags:
        del flags[rng.randrange(len(flags))]
    elif roll < 0.65:
        flags = ["-p", ",".join(random_pass(rng) for _ in range(rng.randint(1, 4)))]
    elif roll < 0.75:
        flags.append(rng.choice(("-O0", "-O1", "-O3")))
    elif roll < 0.8:
        flags += ["-t", rng.choice(("llvm", "asm", "ptx"))]
    return flags
