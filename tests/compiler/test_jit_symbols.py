"""Every symbol JIT code calls must resolve before it runs: a missing one (a
helper LLVM calls that the host's libgcc lacks, say) is a CompileError naming
it, never a call to address 0."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest

from dfc.compiler.codegen.elf_symbols import defined_symbols, undefined_symbols
from dfc.compiler.codegen.llvm.jit import check_symbols
from dfc.compiler.codegen.runtime import install
from dfc.compiler.codegen.target import host_target_machine
from dfc.dialects.diagnostics import CompileError

CALLS = """
declare double @{callee}(double)
declare extern_weak double @__dfc_weak_symbol(double)
define double @f(double %x) {{
  %a = call double @{callee}(double %x)
  %c = fptrunc double %a to bfloat
  %d = fpext bfloat %c to double
  ret double %d
}}
define double @g(double %x) {{
  %a = call double @f(double %x)
  ret double %a
}}"""


def _object(callee: str) -> bytes:
    tm = host_target_machine(2)
    module = llvm.parse_assembly(CALLS.format(callee=callee))
    module.triple = tm.triple
    return tm.emit_object(module)


def test_undefined_symbols_are_the_declared_calls_and_the_code_generators_helpers():
    names = undefined_symbols(_object("exp"))
    assert "exp" in names and "f" not in names and "g" not in names
    assert "__dfc_weak_symbol" not in names  # weak: may be absent
    if llvm.get_process_triple().startswith("x86_64"):
        assert "__truncdfbf2" in names  # a libcall code generation adds (no bf16 instructions on x86)


def test_a_symbol_nobody_defines_is_a_compile_error_naming_it():
    install()
    check_symbols((_object("exp"),))  # libm's exp and the runtime's __truncdfbf2 resolve
    with pytest.raises(CompileError, match="calls __dfc_no_such_symbol, which this host does not provide"):
        check_symbols((_object("__dfc_no_such_symbol"),))


def test_a_symbol_another_loaded_object_defines_resolves():
    """A module's parts are objects of their own: one defines what another calls."""
    install()
    tm = host_target_machine(2)
    other = llvm.parse_assembly("define double @__dfc_other_part(double %x) {\n  ret double %x\n}")
    other.triple = tm.triple
    defining = tm.emit_object(other)
    assert "__dfc_other_part" in defined_symbols(defining) and "f" in defined_symbols(_object("exp"))
    check_symbols((_object("__dfc_other_part"), defining))
    with pytest.raises(CompileError, match="calls __dfc_other_part,"):
        check_symbols((_object("__dfc_other_part"),))


def test_other_formats_are_not_read():
    assert undefined_symbols(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # Mach-O
