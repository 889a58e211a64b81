// RUN: opt-tool %s --split-input-file --convert-stablehlo | filecheck %s
// RUN: opt-tool %S/../../data/stablehlo/jacobi2d.mlir --convert-stablehlo --dce | filecheck %s --check-prefix=JACOBI
// RUN: opt-tool %S/../../data/stablehlo/mlp.mlir --convert-stablehlo --dce | filecheck %s --check-prefix=MLP

// Elementwise ops map one to one; an integer negate is 0 - x; a convert to the same type vanishes.
func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.logistic %0 : tensor<4xf32>
  %2 = stablehlo.convert %1 : tensor<4xf32>
  %3 = stablehlo.negate %i : tensor<4xi32>
  %4 = stablehlo.compare GE, %2, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return %2, %3, %4 : tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
}
// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %0 = nn.add %a, %b
// CHECK-NEXT:    %1 = nn.sigmoid %0
// CHECK-NEXT:    %2 = nn.full {value = 0 : i32} : tensor<i32>
// CHECK-NEXT:    %3 = nn.sub %2, %i
// CHECK-NEXT:    %4 = nn.compare %1, %b {direction = "GE"}
// CHECK-NEXT:    func.return %1, %3, %4

// -----

// A reduce whose init is the body's identity is nn.reduce; another init is combined afterwards.
func.func @reduce(%x: tensor<4x5xf32>, %p: tensor<4x5xi1>) -> (tensor<4xf32>, tensor<5xf32>, tensor<4xi1>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %true = stablehlo.constant dense<true> : tensor<i1>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = stablehlo.reduce(%x init: %one) applies stablehlo.maximum across dimensions = [0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<5xf32>
  %2 = stablehlo.reduce(%p init: %true) applies stablehlo.and across dimensions = [1] : (tensor<4x5xi1>, tensor<i1>) -> tensor<4xi1>
  func.return %0, %1, %2 : tensor<4xf32>, tensor<5xf32>, tensor<4xi1>
}
// CHECK-LABEL: func.func @reduce
// CHECK:         %[[SUM:.*]] = nn.reduce %x {kind = "sum", axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[MAX:.*]] = nn.reduce %x {kind = "max", axes = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[WITH_INIT:.*]] = nn.maximum %[[MAX]], %one
// CHECK-NEXT:    %[[F:.*]] = nn.convert %p : (tensor<4x5xi1>) -> tensor<4x5xf32>
// CHECK-NEXT:    %[[MIN:.*]] = nn.reduce %[[F]] {kind = "min", axes = array<i64: 1>}
// CHECK-NEXT:    %[[T:.*]] = nn.convert %true : (tensor<i1>) -> tensor<f32>
// CHECK-NEXT:    %[[AND:.*]] = nn.minimum %[[MIN]], %[[T]]
// CHECK-NEXT:    %[[B:.*]] = nn.convert %[[AND]] : (tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT:    func.return %[[SUM]], %[[WITH_INIT]], %[[B]]

// -----

// JAX's argmax: a reduce of (values, iota) with a compare-and-select body.
func.func @argmax(%x: tensor<3x4xf32>) -> tensor<3xi32> {
  %0 = stablehlo.iota dim = 1 : tensor<3x4xi32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%x init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ia: tensor<i32>, %ib: tensor<i32>)  {
    %2 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.select %2, %a, %b : tensor<i1>, tensor<f32>
    %4 = stablehlo.select %2, %ia, %ib : tensor<i1>, tensor<i32>
    stablehlo.return %3, %4 : tensor<f32>, tensor<i32>
  }
  func.return %1#1 : tensor<3xi32>
}
// CHECK-LABEL: func.func @argmax
// CHECK:         %[[A:.*]] = nn.argmax %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi32>
// CHECK-NEXT:    func.return %[[A]]

// -----

func.func @pooling_and_conv(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x3x6x6xf32>) {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %cst) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %1 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return %0, %1 : tensor<1x2x3x3xf32>, tensor<1x3x6x6xf32>
}
// CHECK-LABEL: func.func @pooling_and_conv
// CHECK:         nn.reduce_window %x {kind = "max", window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>, window_dilations = array<i64: 1, 1, 1, 1>, padding_low = array<i64: 0, 0, 0, 0>, padding_high = array<i64: 0, 0, 0, 0>}
// CHECK-NEXT:    nn.convolution %x, %w {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 1, 1>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64}

// -----

// `counter < N` from a constant start by a constant step: an scf.for of ceil((10 - 2) / 3) = 3 trips.
func.func @static_while(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<2> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %y = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %s = stablehlo.constant dense<3> : tensor<i32>
    %j = stablehlo.add %i, %s : tensor<i32>
    %z = stablehlo.sine %y : tensor<4xf32>
    stablehlo.return %j, %z : tensor<i32>, tensor<4xf32>
  }
  func.return %0#1 : tensor<4xf32>
}
// CHECK-LABEL: func.func @static_while
// CHECK:         %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %{{.*}}, %[[Y:.*]] = scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%i = %c, %y = %x) -> (tensor<i32>, tensor<4xf32>) {
// CHECK:           %[[J:.*]] = nn.add %i, %s
// CHECK-NEXT:      %[[Z:.*]] = nn.sine %y
// CHECK-NEXT:      scf.yield %[[J]], %[[Z]] : tensor<i32>, tensor<4xf32>
// CHECK:         func.return %[[Y]]

// -----

// A condition on data: scf.while, the predicate extracted from its 0-d tensor.
func.func @data_while(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.while(%y = %x) : tensor<f32>
  cond {
    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %p = stablehlo.compare GT, %y, %one, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %z = stablehlo.sqrt %y : tensor<f32>
    stablehlo.return %z : tensor<f32>
  }
  func.return %0 : tensor<f32>
}
// CHECK-LABEL: func.func @data_while
// CHECK:         scf.while (%y = %x) : (tensor<f32>) -> tensor<f32> {
// CHECK:           %[[P:.*]] = nn.compare %y, %one {direction = "GT"}
// CHECK-NEXT:      %[[B:.*]] = tensor.extract %[[P]][] : tensor<i1>
// CHECK-NEXT:      scf.condition(%[[B]]) %y : tensor<f32>
// CHECK-NEXT:    } do {
// CHECK:           nn.sqrt
// CHECK-NEXT:      scf.yield

// -----

// case: index == 0 ? b0 : (index == 1 ? b1 : b2), the last branch taking every other index.
func.func @case(%k: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%k) ({
    %a = stablehlo.sine %x : tensor<4xf32>
    stablehlo.return %a : tensor<4xf32>
  }, {
    %b = stablehlo.cosine %x : tensor<4xf32>
    stablehlo.return %b : tensor<4xf32>
  }, {
    %c = stablehlo.tanh %x : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @case
// CHECK-NEXT:    %[[K:.*]] = tensor.extract %k[] : tensor<i32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[IS0:.*]] = arith.cmpi eq, %[[K]], %[[ZERO]] : i32
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[IS0]] -> (tensor<4xf32>) {
// CHECK-NEXT:      nn.sine
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[IS1:.*]] = arith.cmpi eq, %[[K]], %[[ONE]] : i32
// CHECK-NEXT:      %[[R1:.*]] = scf.if %[[IS1]] -> (tensor<4xf32>) {
// CHECK-NEXT:        nn.cosine
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      } else {
// CHECK-NEXT:        nn.tanh
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[R1]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]

// -----

// dot contracts lhs's last and rhs's first dimension; optimization_barrier passes its operands on.
func.func @dot_and_barrier(%m: tensor<3x4xf32>, %v: tensor<4xf32>) -> (tensor<3xf32>, tensor<4xf32>) {
  %0 = stablehlo.dot %m, %v, precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %1:2 = stablehlo.optimization_barrier %0, %v : tensor<3xf32>, tensor<4xf32>
  func.return %1#0, %1#1 : tensor<3xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @dot_and_barrier
// CHECK-NEXT:    %[[D:.*]] = nn.dot_general %m, %v {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
// CHECK-NEXT:    func.return %[[D]], %v

// -----

// Calls into the module are inlined and the private callee goes.
func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @twice(%y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %y, %y : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func public @main
// CHECK-NEXT:    %[[R:.*]] = nn.add %x, %x
// CHECK-NEXT:    func.return %[[R]]
// CHECK-NOT:   @twice

// -----

// A sort of one key (a GT compare of operand 0's elements: descending) gathers every operand by nn.argsort.
func.func @sort(%x: tensor<3x4xi32>, %y: tensor<3x4xf32>) -> (tensor<3x4xi32>, tensor<3x4xf32>) {
  %0:2 = "stablehlo.sort"(%x, %y) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):
    %1 = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<3x4xi32>, tensor<3x4xf32>) -> (tensor<3x4xi32>, tensor<3x4xf32>)
  func.return %0#0, %0#1 : tensor<3x4xi32>, tensor<3x4xf32>
}
// CHECK-LABEL: func.func @sort
// CHECK-NEXT:    %[[ORDER:.*]] = nn.argsort %x {axis = 1 : i64, descending} : (tensor<3x4xi32>) -> tensor<3x4xi64>
// CHECK-NEXT:    %[[X:.*]] = nn.gather %x, %[[ORDER]] {{.*}}collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>
// CHECK-NEXT:    %[[Y:.*]] = nn.gather %y, %[[ORDER]]
// CHECK-NEXT:    func.return %[[X]], %[[Y]]

// -----

// chlo.top_k: a descending nn.argsort with k along the last dimension.
func.func @top_k(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
  %values, %indices = chlo.top_k(%x, k = 2) : tensor<3x4xf32> -> (tensor<3x2xf32>, tensor<3x2xi32>)
  func.return %values, %indices : tensor<3x2xf32>, tensor<3x2xi32>
}
// CHECK-LABEL: func.func @top_k
// CHECK-NEXT:    %[[ORDER:.*]] = nn.argsort %x {axis = 1 : i64, descending, k = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x2xi64>
// CHECK-NEXT:    %indices = nn.convert %[[ORDER]] : (tensor<3x2xi64>) -> tensor<3x2xi32>
// CHECK-NEXT:    %values = nn.gather %x, %[[ORDER]]
// CHECK-NEXT:    func.return %values, %indices

// JAX's fori_loop sweep (jacobi2d) becomes an scf.for of 4 trips whose body updates the interior with nn.scatter.
// JACOBI:      %[[UB:.*]] = arith.constant 4 : index
// JACOBI:      scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args
// JACOBI-COUNT-4: nn.slice
// JACOBI:        nn.scatter {{.*}}kind = "replace"
// JACOBI:        scf.yield
// JACOBI-NOT:  stablehlo.

// MLP:         func.func public @main
// MLP-NEXT:      nn.dot_general %arg0, %arg1 {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>}
// MLP:           nn.maximum
// MLP:           nn.tanh
// MLP:           nn.reduce {{.*}}kind = "sum", axes = array<i64: 0, 1>
// MLP-NOT:     stablehlo.
// MLP-NOT:     @relu
