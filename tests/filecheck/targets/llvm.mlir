// The optimised LLVM IR of an elementwise map and of a sum reduction is vectorised,
// addressing is getelementptr inbounds, and float arithmetic carries
// reassoc/contract (the kernels are inlined into their entry wrappers).
// RUN: opt-tool %s -t llvm | filecheck %s
// RUN: opt-tool %s -t asm | filecheck %s --check-prefix=ASM

// CHECK-LABEL: define void @_dfc_entry_scale(ptr noalias
// CHECK:         getelementptr inbounds
// CHECK:         fmul reassoc contract <{{(8|16)}} x float>
func.func @scale(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %e = tensor.empty() : tensor<4096xf32>
  %r = df.map (%i) in (4096) outs(%o = %e : tensor<4096xf32>) {
    %v = df.read %x[%i] : tensor<4096xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %k = arith.constant 3.0 : f32
      %m = arith.mulf %a, %k : f32
      df.yield %m : f32
    }
    df.write %w, %o[%i] : tensor<4096xf32>
  } -> tensor<4096xf32>
  func.return %r : tensor<4096xf32>
}

// CHECK-LABEL: define void @_dfc_entry_total(
// CHECK:         fadd reassoc contract <{{(8|16)}} x float>
// ASM-LABEL:   _dfc_entry_total:
// ASM:           vaddps
func.func @total(%x: tensor<4096xf32>) -> tensor<f32> {
  %z = arith.constant dense<0.0> : tensor<f32>
  %r = df.map (%i) in (4096) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<4096xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %r : tensor<f32>
}
