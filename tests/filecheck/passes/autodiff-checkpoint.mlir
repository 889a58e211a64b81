// RUN: opt-tool %s '--autodiff{func=stored}' | filecheck %s --check-prefix=STORED
// RUN: opt-tool %s '--autodiff{func=nothing}' | filecheck %s --check-prefix=NOTHING
// RUN: opt-tool %s '--autodiff{func=dots}' | filecheck %s --check-prefix=DOTS

// An unmarked call is inlined into the gradient's forward computation: its
// matmul and tanh values are stored for the backward sweep.
// STORED-LABEL: func.func @stored_grad
// STORED-NOT:     func.call
// STORED:         nn.matmul
// STORED:         nn.tanh
// STORED-NOT:     func.call
// STORED:         func.return

// A checkpoint: the forward calls @layer, the backward @layer_grad, which
// recomputes the matmul and the tanh before reversing them.
// NOTHING-LABEL: func.func @layer_grad
// NOTHING:         nn.matmul
// NOTHING:         nn.tanh
// NOTHING-LABEL: func.func @nothing_grad
// NOTHING-NOT:     nn.matmul
// NOTHING:         %[[Y:.*]] = func.call @layer(%x, %w) {df.checkpoint = "nothing_saveable"}
// NOTHING-NOT:     nn.matmul
// NOTHING:         func.call @layer_grad(%x, %w, %{{.*}})

// dots_saveable: the forward also returns the matmul's result, which the
// backward reads instead of recomputing it; only the tanh is recomputed.
// DOTS:       func.func @layer_grad_dots(%h: tensor<2x2xf64>, %w: tensor<2x2xf64>, %[[SAVED:[a-z0-9_]+]]: tensor<2x2xf64>, %seed: tensor<2x2xf64>)
// DOTS-NEXT:    nn.tanh %[[SAVED]]
// DOTS-NOT:     nn.matmul %h, %w
// DOTS:         func.return
// DOTS-LABEL: func.func private @layer_dots
// DOTS:         %[[P:.*]] = nn.matmul
// DOTS:         func.return %{{.*}}, %[[P]]
// DOTS-LABEL: func.func @dots_grad
// DOTS:         %{{.*}}, %[[S:.*]] = func.call @layer_dots(%x, %w)
// DOTS:         func.call @layer_grad_dots(%x, %w, %[[S]], %{{.*}})
func.func @layer(%h: tensor<2x2xf64>, %w: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %p = nn.matmul %h, %w : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %t = nn.tanh %p : (tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %t : tensor<2x2xf64>
}
func.func @stored(%x: tensor<2x2xf64>, %w: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %y = func.call @layer(%x, %w) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %y : tensor<2x2xf64>
}
func.func @nothing(%x: tensor<2x2xf64>, %w: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %y = func.call @layer(%x, %w) {df.checkpoint = "nothing_saveable"} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %y : tensor<2x2xf64>
}
func.func @dots(%x: tensor<2x2xf64>, %w: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %y = func.call @layer(%x, %w) {df.checkpoint = "dots_saveable"} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %y : tensor<2x2xf64>
}
