"""Names for JIT code in Linux `perf` profiles.

With `DFC_PERF_MAP` set (to anything but `0`), every module the engine loads
appends its functions to `/tmp/perf-<pid>.map`, the file `perf report` reads
for code that has no file on disk: the outlined parallel bodies
(`forward_bwd.par49`), the GEMM blocks and the entries then show by name
instead of as bare addresses.

    DFC_PERF_MAP=1 perf record -g python train.py && perf report

The symbols come from the ELF object the module was compiled to (its symbol
table gives each function's offset in `.text` and its size); the address of
one exported function, which MCJIT resolves, places the section in memory.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator

from dfc import config

_FUNC = 2  # STT_FUNC
_SYMTAB = 2  # SHT_SYMTAB


def enabled() -> bool:
    """`DFC_PERF_MAP`."""
    return config.PERF_MAP.value()


def functions(obj: bytes) -> Iterator[tuple[str, int, int, int]]:
    """(name, section index, offset in that section, size) of each function
    defined in the little-endian ELF64 object `obj`."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + k * shentsize) for k in range(shnum)]
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != _SYMTAB or not entsize:
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, entsize):
            name_at, info, _, shndx, value, length = struct.unpack_from("<IBBHQQ", obj, at)
            if info & 0xF == _FUNC and shndx and length:
                end = obj.index(b"\0", strings + name_at)
                yield obj[strings + name_at : end].decode(), shndx, value, length


def write(obj: bytes, address_of: Callable[[str], int], path: str | None = None) -> int:
    """Append the functions of `obj` to the perf map (`path`, default
    /tmp/perf-<pid>.map); `address_of(name)` is the loaded address of an
    exported function, or 0. Returns how many lines were written."""
    found = list(functions(obj))
    base: dict[int, int] = {}
    for name, shndx, value, _ in found:
        if shndx not in base and (address := address_of(name)):
            base[shndx] = address - value
    lines = [f"{base[s] + v:x} {n:x} {name}\n" for name, s, v, n in found if s in base]
    with open(path or f"/tmp/perf-{os.getpid()}.map", "a") as out:
        out.writelines(lines)
    return len(lines)
