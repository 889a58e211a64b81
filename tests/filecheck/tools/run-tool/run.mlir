// run-tool compiles and calls a function; results print in a stable form.
// RUN: run-tool %s --entry affine --random-args 0 --print-results | filecheck %s
// RUN: run-tool %s --entry affine --arg x=%S/inputs/ones.npy --print-results | filecheck %s --check-prefix=FILE
// RUN: not run-tool %s --entry missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not run-tool %s --entry affine 2>&1 | filecheck %s --check-prefix=NOARGS
// RUN: not run-tool %s --entry affine --arg x=%S/inputs/wrong-shape.npy 2>&1 | filecheck %s --check-prefix=SHAPE

// CHECK: result #0: tensor<4xf32> = [{{.*}}]
// FILE: result #0: tensor<4xf32> = [3., 3., 3., 3.]
// MISSING: run-tool: error: no function @missing in {{.*}}run.mlir
// NOARGS: run-tool: error: argument #0 (%x) of @affine is not given (use --arg or --random-args)
// SHAPE: run-tool: error: @affine argument #0 must have size 4 in dimension 0 (tensor<4xf32>), got shape (3,)
func.func @affine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = df.map (%i) in (4) outs(%o = %x : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %m = arith.mulf %a, %two : f32
      %s = arith.addf %m, %one : f32
      df.yield %s : f32
    }
    df.write %w, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
