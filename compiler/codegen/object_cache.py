"""Persistent cache of compiled machine code, so a second process skips the
lowering pipeline, LLVM optimisation and code generation.

Enabled by `DFC_CACHE_DIR` (off when unset, like JAX's persistent cache).
An entry is keyed by a hash of the module's text, the compile options, the
host target (triple, CPU name and features), the versions of dfc and
llvmlite and a fingerprint of dfc's installed sources (each file's path,
size and modification time: an edited development checkout compiles afresh
without a version change), so a change to any of them compiles afresh. `DFC_CACHE_MAX_MB`
(default 512) bounds the directory: storing an entry first evicts the least
recently used ones. An unreadable or truncated entry counts as a miss.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
import zlib
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

from dfc import config

_VERSION = version("dfc")
_MAGIC = b"dfc-object-2\n"
_SUFFIX = ".dfcobj"


@dataclass(frozen=True)
class CachedObject:
    """What a JitModule needs to load without compiling."""

    objs: tuple[bytes, ...]
    """The relocatable object files of the optimised module's parts (one per
    kernel, `llvm.split`), linked to one another when loaded."""
    irs: tuple[str, ...]
    """The optimised LLVM IR of each part, for inspection."""
    reentrant: bool

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR of all the parts."""
        return "\n".join(self.irs)


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off."""
    path = config.CACHE_DIR.value()
    return Path(path) if path else None


@functools.cache
def source_fingerprint() -> str:
    """A digest of the path, size and modification time of every source file
    of dfc's packages (`dfc` and the folders pyproject maps into it)."""
    h = hashlib.sha256()
    for package in ("dfc", "dfc.compiler", "dfc.dialects", "dfc.passes"):
        spec = importlib.util.find_spec(package)
        for root in sorted(spec.submodule_search_locations or ()) if spec is not None else ():
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".ll", ".c")):
                        stat = os.stat(os.path.join(folder, name))
                        h.update(f"{folder}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return h.hexdigest()


def cache_key(module_text: str, options: object, target: llvm.TargetMachine) -> str:
    """The hex digest naming the entry of `module_text` compiled with `options`
    (a value whose `repr` states them all) for `target`."""
    h = hashlib.sha256()
    for part in (_VERSION, source_fingerprint(), llvmlite.__version__, target.triple, llvm.get_host_cpu_name(),
                 llvm.get_host_cpu_features().flatten(), repr(options), module_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def load(key: str) -> CachedObject | None:
    """The entry `key`, or None when absent, unreadable, or caching is off."""
    directory = cache_dir()
    if directory is None:
        return None
    path = directory / (key + _SUFFIX)
    try:
        data = path.read_bytes()
        if not data.startswith(_MAGIC):
            return None
        header_end = data.index(b"\n", len(_MAGIC))
        header = json.loads(data[len(_MAGIC) : header_end])
        at, objs = header_end + 1, []
        for size in header["objs"]:
            objs.append(data[at : at + size])
            at += size
        text = zlib.decompress(data[at:])
        if at > len(data) or sum(header["irs"]) != len(text):
            return None
        irs, at = [], 0
        for size in header["irs"]:
            irs.append(text[at : at + size].decode())
            at += size
        os.utime(path)  # recently used
    except (OSError, ValueError, KeyError, TypeError, zlib.error):
        return None
    return CachedObject(tuple(objs), tuple(irs), bool(header["reentrant"]))


def store(key: str, entry: CachedObject) -> None:
    """Write entry `key` atomically, evicting old entries to stay within the size bound.
    Failures to write (read-only or full disk) leave the cache as it was."""
    directory = cache_dir()
    if directory is None:
        return
    irs = [ir.encode() for ir in entry.irs]
    header = json.dumps({"objs": [len(obj) for obj in entry.objs], "irs": [len(ir) for ir in irs],
                         "reentrant": entry.reentrant}).encode()
    data = _MAGIC + header + b"\n" + b"".join(entry.objs) + zlib.compress(b"".join(irs))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _evict(directory, keep_bytes=_max_bytes() - len(data))
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, directory / (key + _SUFFIX))
    except OSError:
        return


def _max_bytes() -> int:
    return int(config.CACHE_MAX_MB.value() * 2**20)


def _evict(directory: Path, keep_bytes: int) -> None:
    """Remove least recently used entries until at most `keep_bytes` remain."""
    entries = []
    for path in directory.glob("*" + _SUFFIX):
        try:
            st = path.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= keep_bytes:
            break
        path.unlink(missing_ok=True)
        total -= size
