"""CPU code generation: upstream MLIR dialects (func, scf, memref, arith, math) to LLVM IR, optimised and JIT-compiled with llvmlite."""
