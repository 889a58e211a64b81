"""`python -m benchmarks` starts with what its figures depend on: the CPU, its
vector ISA, the BLAS and its kernel set, and the thread counts."""

import os
import re

from benchmarks.common import machine
from dfc.config import default_threads


def test_header_names_the_cpu_isa_blas_and_threads():
    text = machine()
    lines = text.split("\n")
    assert [line.split(":")[0] for line in lines] == ["CPU", "BLAS", "threads"]
    assert re.search(rf"\(LLVM: [\w-]+\), {os.cpu_count()} logical CPUs, ISA ", lines[0])
    assert "dfc's products call " in lines[1] and "DFC_GEMM=" in lines[1]
    assert lines[2].startswith(f"threads: dfc {default_threads()}, OpenBLAS ")
