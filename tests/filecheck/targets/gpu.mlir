// `-t gpu` prints the GPU kernels as PTX; `-t ptx`, its deprecated spelling,
// prints the same and a warning.
// RUN: opt-tool %s -t gpu | filecheck %s
// RUN: opt-tool %s -t ptx 2>/dev/null | filecheck %s
// RUN: opt-tool %s -t ptx 2>&1 >/dev/null | filecheck %s --check-prefix=WARN

// CHECK:       .target sm_90
// CHECK-LABEL: .visible .entry neg_k0(
// CHECK:         neg.f32
// WARN: opt-tool: warning: '-t ptx' is deprecated, use '-t gpu'
func.func @neg(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = df.map (%i) in (64) outs(%o = %e : tensor<64xf32>) {
    %v = df.read %x[%i] : tensor<64xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %n = arith.negf %a : f32
      df.yield %n : f32
    }
    df.write %w, %o[%i] : tensor<64xf32>
  } -> tensor<64xf32>
  func.return %r : tensor<64xf32>
}
