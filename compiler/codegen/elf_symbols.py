"""The symbols an ELF64 object file needs from elsewhere (its undefined global
symbols) and those it defines for the objects loaded with it, read from its
symbol table, so that the JIT can check that each needed one resolves before
it runs code that calls them (MCJIT links an unresolved symbol to address 0)."""

from __future__ import annotations

import struct

_SHT_SYMTAB = 2
_STB_LOCAL = 0
_STB_WEAK = 2
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")


def undefined_symbols(obj: bytes) -> list[str] | None:
    """The names of the undefined non-weak symbols of `obj`, in table order;
    None when `obj` is not a little-endian ELF64 object."""
    found = _symbols(obj)
    return None if found is None else [name for name, info, shndx in found if shndx == 0 and info >> 4 != _STB_WEAK]


def defined_symbols(obj: bytes) -> set[str]:
    """The names of the global and weak symbols `obj` defines (what other
    objects loaded with it may use); empty when `obj` is not a little-endian ELF64 object."""
    return {name for name, info, shndx in _symbols(obj) or () if shndx != 0 and info >> 4 != _STB_LOCAL}


def _symbols(obj: bytes) -> list[tuple[str, int, int]] | None:
    """(name, info, section index) of each named symbol of `obj`, in table order."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [_SECTION.unpack_from(obj, shoff + k * shentsize) for k in range(shnum)]
    found: list[tuple[str, int, int]] = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != _SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):  # entry 0 is the null symbol
            name, info, _, shndx, _, _ = _SYMBOL.unpack_from(obj, at)
            if name:
                end = obj.index(b"\0", strings + name)
                found.append((obj[strings + name:end].decode(), info, shndx))
    return found
