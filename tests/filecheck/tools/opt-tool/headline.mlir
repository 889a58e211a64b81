// The README's main job: `--autodiff --fuse` on library-level IR prints the
// gradient with its maps fused (fuse expands the library ops it works on).
// RUN: opt-tool %S/../../../../examples/mlp.mlir --autodiff --fuse | filecheck %s
// RUN: opt-tool %S/../../../../examples/mlp.mlir --autodiff | filecheck %s --check-prefix=UNFUSED

// CHECK-LABEL: func.func @mlp(
// CHECK-NOT:     nn.
// CHECK-LABEL: func.func @mlp_grad(
// CHECK-NOT:     nn.
// The gradients of nll_loss (the label mask) and of log_softmax are computed
// by one tasklet, without a tensor between them:
// CHECK:         df.tasklet ({{.*}}) : (f32, i1, f32, f32, f32, f32) -> f32 {
// CHECK:           arith.select
// CHECK:           math.log
// CHECK:           math.exp
// CHECK:           df.yield
// CHECK:         func.return

// UNFUSED: func.func @mlp_grad(
// UNFUSED:   nn.linear
