"""The LLVM emitter: upstream MLIR (func, scf, memref, arith, math) and `blas.gemm` to LLVM IR, op by op.

The translation is direct, into llvmlite's IR builder, so that what LLVM
needs to vectorise stays under our control: `getelementptr inbounds`
addressing (pointer provenance is never lost to integers), `noalias` buffer
parameters, and fast-math flags.

    values       LLVM types, memref values (`MemRef`), flattening, `memref_extent`
    emitter      the walker: `ModuleEmitter`, `FunctionEmitter`, handler tables (`Handlers`)
    arith, math, memref, scf, blas
                 one handler table (`HANDLERS`) per dialect
    polynomials  inline exp, log, tanh (host `vector_math` and GPU math)
    outline      regions as functions (parallel bodies, epilogues, loop nests)
    module       host module assembly: functions, globals, entry wrappers; `emit_module`
    jit          `optimize`, `JitModule`

Imports run one way: values <- emitter <- outline <- the dialect modules <-
module <- jit, and values <- polynomials <- math. The NVPTX emitter
(`compiler.codegen.nvptx`) subclasses `emitter.FunctionEmitter` and composes
its own handler table from the dialect modules' ones.
"""
