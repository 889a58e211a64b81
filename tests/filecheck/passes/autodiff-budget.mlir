// RUN: opt-tool %s '--autodiff{memory-budget=1000}' | filecheck %s --check-prefix=FULL
// RUN: opt-tool %s '--autodiff{memory-budget=300}' | filecheck %s --check-prefix=CHECKPOINT
// RUN: opt-tool %s '--autodiff{memory-budget=100}' | filecheck %s --check-prefix=RECOMPUTE

// Ten steps of a 32-byte state. 1,000 bytes hold the full tape (10 rows).
// FULL-LABEL: func.func @tanh_loop_grad
// FULL:         tensor.empty() : tensor<10x4xf64>
// FULL-NOT:     arith.minsi

// 300 bytes do not (320), but 5 checkpoints every 2 steps, the state restored
// from one and a 2-row segment tape do (256): the forward loop runs by
// segments, the backward loop recomputes each segment into its tape.
// CHECKPOINT-LABEL: func.func @tanh_loop_grad
// CHECKPOINT:         %[[CK:.*]] = tensor.empty() : tensor<5x4xf64>
// CHECKPOINT:         %{{.*}}, %[[CKS:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[S:.*]] = %x, %{{.*}} = %[[CK]]) -> (tensor<4xf64>, tensor<5x4xf64>) {
// CHECKPOINT:           df.write %{{.*}}, %{{.*}}[%[[J]], %{{.*}}] : tensor<5x4xf64>
// CHECKPOINT:           %[[END:.*]] = arith.minsi
// CHECKPOINT:           scf.for %{{.*}} = %{{.*}} to %[[END]] step %{{.*}} iter_args(%{{.*}} = %[[S]]) -> (tensor<4xf64>) {
// CHECKPOINT:             nn.tanh
// CHECKPOINT:         scf.for
// CHECKPOINT:           df.read %[[CKS]][%{{.*}}, %{{.*}}] : tensor<5x4xf64>
// CHECKPOINT:           %[[SEG:.*]] = tensor.empty() : tensor<2x4xf64>
// CHECKPOINT:           %{{.*}}, %[[TAPE:.*]] = scf.for {{.*}} -> (tensor<4xf64>, tensor<2x4xf64>) {
// CHECKPOINT:           scf.for
// CHECKPOINT:             df.read %[[TAPE]][%{{.*}}, %{{.*}}] : tensor<2x4xf64>
// CHECKPOINT-NOT:     tensor<10x4xf64>

// 100 bytes hold no schedule that stores: each backward step reruns the loop.
// RECOMPUTE-LABEL: func.func @tanh_loop_grad
// RECOMPUTE-NOT:     x4xf64>
func.func @tanh_loop(%x: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %t = %c0 to %c10 step %c1 iter_args(%h = %x) -> (tensor<4xf64>) {
    %y = nn.tanh %h : (tensor<4xf64>) -> tensor<4xf64>
    scf.yield %y : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}
