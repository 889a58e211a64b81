// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every elementwise nn op (dialects/nn_elementwise.py) in its custom form; the
// generic form parses back to the same IR.

// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %{{.*}} = nn.abs %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sign %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.floor %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.ceil %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.round %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.round_even %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.stop_gradient %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.expm1 %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.log1p %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.rsqrt %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.cbrt %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.erf %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sine %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.cosine %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.tan %b : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.atan2 %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.power %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.remainder %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.maximum %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.minimum %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.clamp %s, %a, %b : (tensor<f32>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.compare %a, %b {direction = "LT"} : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.compare %i, %j {direction = "NE"} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
// CHECK-NEXT:    %{{.*}} = nn.select %p, %a, %b : (tensor<4x8xi1>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.convert %b : (tensor<8xf32>) -> tensor<8xf64>
// CHECK-NEXT:    %{{.*}} = nn.convert %i : (tensor<8xi32>) -> tensor<8xi1>
// CHECK-NEXT:    %{{.*}} = nn.bitcast_convert %i : (tensor<8xi32>) -> tensor<8xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "elementwise"
// GENERIC:       "nn.compare"(%{{.*}}, %{{.*}}) <{direction = "LT"}> : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xi1>
func.func @elementwise(%a: tensor<4x1xf32>, %b: tensor<8xf32>, %s: tensor<f32>, %i: tensor<8xi32>, %j: tensor<8xi32>, %p: tensor<4x8xi1>) {
  %0 = nn.abs %b : (tensor<8xf32>) -> tensor<8xf32>
  %1 = nn.sign %b : (tensor<8xf32>) -> tensor<8xf32>
  %2 = nn.floor %b : (tensor<8xf32>) -> tensor<8xf32>
  %3 = nn.ceil %b : (tensor<8xf32>) -> tensor<8xf32>
  %4 = nn.round %b : (tensor<8xf32>) -> tensor<8xf32>
  %even = nn.round_even %b : (tensor<8xf32>) -> tensor<8xf32>
  %stop = nn.stop_gradient %b : (tensor<8xf32>) -> tensor<8xf32>
  %5 = nn.expm1 %b : (tensor<8xf32>) -> tensor<8xf32>
  %6 = nn.log1p %b : (tensor<8xf32>) -> tensor<8xf32>
  %7 = nn.rsqrt %b : (tensor<8xf32>) -> tensor<8xf32>
  %8 = nn.cbrt %b : (tensor<8xf32>) -> tensor<8xf32>
  %erf = nn.erf %b : (tensor<8xf32>) -> tensor<8xf32>
  %9 = nn.sine %b : (tensor<8xf32>) -> tensor<8xf32>
  %10 = nn.cosine %b : (tensor<8xf32>) -> tensor<8xf32>
  %11 = nn.tan %b : (tensor<8xf32>) -> tensor<8xf32>
  %12 = nn.atan2 %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %13 = nn.power %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %14 = nn.remainder %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %15 = nn.maximum %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %16 = nn.minimum %a, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %17 = nn.clamp %s, %a, %b : (tensor<f32>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %18 = nn.compare %a, %b {direction = "LT"} : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %19 = nn.compare %i, %j {direction = "NE"} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
  %20 = nn.select %p, %a, %b : (tensor<4x8xi1>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %21 = nn.convert %b : (tensor<8xf32>) -> tensor<8xf64>
  %22 = nn.convert %i : (tensor<8xi32>) -> tensor<8xi1>
  %23 = nn.bitcast_convert %i : (tensor<8xi32>) -> tensor<8xf32>
  func.return
}

// CHECK-LABEL: func.func @bitwise
// CHECK-NEXT:    %{{.*}} = nn.and %p, %q : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.or %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT:    %{{.*}} = nn.xor %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT:    %{{.*}} = nn.not %p : (tensor<4x8xi1>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.shift_left %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT:    %{{.*}} = nn.shift_right_arithmetic %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// CHECK-NEXT:    %{{.*}} = nn.shift_right_logical %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
func.func @bitwise(%p: tensor<4x8xi1>, %q: tensor<8xi1>, %i: tensor<8xi32>, %j: tensor<8xi32>) {
  %0 = nn.and %p, %q : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
  %1 = nn.or %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %2 = nn.xor %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %3 = nn.not %p : (tensor<4x8xi1>) -> tensor<4x8xi1>
  %4 = nn.shift_left %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %5 = nn.shift_right_arithmetic %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %6 = nn.shift_right_logical %i, %j : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  func.return
}
