// --verify-diagnostics passes when each error is annotated where it occurs,
// and fails, naming the mismatch, otherwise.
// RUN: opt-tool %s --split-input-file --verify-diagnostics
// RUN: not opt-tool %S/inputs/wrong-diagnostics.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK: wrong-diagnostics.mlir:3:8: error: unexpected error: 'nn.exp' op input must have a float element type
// CHECK: wrong-diagnostics.mlir:2: error: expected error "wrong text" was not produced
// CHECK: wrong-diagnostics.mlir:10: error: expected error "never happens" was not produced
// An error is never taken for an expected warning:
// CHECK: wrong-diagnostics.mlir:18:8: error: unexpected error: 'nn.exp' op input must have a float element type
// CHECK: wrong-diagnostics.mlir:17: error: expected warning "input must have a float element type" was not produced

func.func @same_line(%a: tensor<2xi32>) {
  %b = nn.exp %a : (tensor<2xi32>) -> tensor<2xi32> // expected-error {{input must have a float element type}}
  func.return
}

// -----

func.func @below_and_above(%a: tensor<2xf32>) {
  // expected-error @below {{result type tensor<3xf32> does not match}}
  %b = nn.exp %a : (tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @offset(%a: tensor<2xf32>) {
  %b = nn.reshape %a : (tensor<2xf32>) -> tensor<3xf32>


  // expected-error @-3 {{cannot reshape}}
  func.return
}
