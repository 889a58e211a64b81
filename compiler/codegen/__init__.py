"""Code generation through llvmlite: the LLVM emitter (`llvm/`) for the host, JIT-compiled; NVPTX kernels (`nvptx`); the runtime and the GEMM kernel."""
