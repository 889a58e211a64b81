"""The symbols an ELF64 object file needs from elsewhere (its undefined global
symbols), read from its symbol table, so that the JIT can check that each
resolves before it runs code that calls them (MCJIT links an unresolved
symbol to address 0)."""

from __future__ import annotations

import struct

_SHT_SYMTAB = 2
_STB_WEAK = 2
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")


def undefined_symbols(obj: bytes) -> list[str] | None:
    """The names of the undefined non-weak symbols of `obj`, in table order;
    None when `obj` is not a little-endian ELF64 object."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [_SECTION.unpack_from(obj, shoff + k * shentsize) for k in range(shnum)]
    names: list[str] = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != _SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):  # entry 0 is the null symbol
            name, info, _, shndx, _, _ = _SYMBOL.unpack_from(obj, at)
            if shndx == 0 and name and info >> 4 != _STB_WEAK:
                end = obj.index(b"\0", strings + name)
                names.append(obj[strings + name:end].decode())
    return names
