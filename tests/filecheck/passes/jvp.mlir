// RUN: opt-tool %s '--jvp{func=dot_tanh}' | filecheck %s --check-prefix=MAP
// RUN: opt-tool %s '--jvp{func=dot_tanh wrt=1}' | filecheck %s --check-prefix=WRT
// RUN: opt-tool %s '--jvp{func=row_max}' | filecheck %s --check-prefix=MAX
// RUN: opt-tool %s '--jvp{func=loop wrt=0,1}' | filecheck %s --check-prefix=LOOP
// RUN: opt-tool %s '--jvp{func=caller}' | filecheck %s --check-prefix=CALL
// RUN: opt-tool %s '--jvp{func=dot_tanh}' '--jvp{func=dot_tanh}' | filecheck %s --check-prefix=TWICE
// RUN: opt-tool %s '--jvp{func=matmul}' | filecheck %s --check-prefix=MATMUL

// A map gets one more output per float output, its tangent: the reads of the
// differentiated tensors read their tangents too, the tasklet gets a tangent
// tasklet (d tanh(a b) = (1 - tanh^2)(b ta + a tb)), and the wcr(add) write
// adds the tangent.
// MAP-LABEL: func.func @dot_tanh_jvp(%a: tensor<8xf64>, %b: tensor<8xf64>, %tangent: tensor<8xf64>, %tangent_1: tensor<8xf64>) -> (tensor<f64>, tensor<f64>) attributes {autodiff.of = "dot_tanh", autodiff.wrt = array<i64: 0, 1>, autodiff.outputs = array<i64: 0>, autodiff.mode = "forward"}
// MAP:         %zero = arith.constant dense<0.000000e+00> : tensor<f64>
// MAP-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<f64>
// MAP:         %s, %[[T:.*]] = df.map (%i) in (8) outs(%o = %zero : tensor<f64>, %[[TO:.*]] = %[[Z]] : tensor<f64>) {
// MAP-NEXT:      %x = df.read %a[%i] : tensor<8xf64>
// MAP-NEXT:      %[[TX:.*]] = df.read %tangent[%i] : tensor<8xf64>
// MAP-NEXT:      %y = df.read %b[%i] : tensor<8xf64>
// MAP-NEXT:      %[[TY:.*]] = df.read %tangent_1[%i] : tensor<8xf64>
// MAP-NEXT:      %p = df.tasklet (%x, %y) : (f64, f64) -> f64 {
// MAP:           %[[TP:.*]] = df.tasklet (%x, %y, %[[TX]], %[[TY]]) : (f64, f64, f64, f64) -> f64 {
// MAP:             math.tanh
// MAP:           df.write %p, %o[] wcr(add) : tensor<f64>
// MAP-NEXT:      df.write %[[TP]], %[[TO]][] wcr(add) : tensor<f64>
// MAP:         func.return %s, %[[T]] : tensor<f64>, tensor<f64>

// Only %b is differentiated: %a's reads get no tangent.
// WRT-LABEL: func.func @dot_tanh_jvp(%a: tensor<8xf64>, %b: tensor<8xf64>, %tangent: tensor<8xf64>) -> (tensor<f64>, tensor<f64>)
// WRT-NOT:     df.read %tangent_1
// WRT:         %[[TP:.*]] = df.tasklet (%x, %y, %{{.*}}) : (f64, f64, f64) -> f64 {
func.func @dot_tanh(%a: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<f64> {
  %zero = arith.constant dense<0.0> : tensor<f64>
  %s = df.map (%i) in (8) outs(%o = %zero : tensor<f64>) {
    %x = df.read %a[%i] : tensor<8xf64>
    %y = df.read %b[%i] : tensor<8xf64>
    %p = df.tasklet (%x, %y) : (f64, f64) -> f64 {
    ^bb0(%u: f64, %v: f64):
      %m = arith.mulf %u, %v : f64
      %t = math.tanh %m : f64
      df.yield %t : f64
    }
    df.write %p, %o[] wcr(add) : tensor<f64>
  } -> tensor<f64>
  func.return %s : tensor<f64>
}

// wcr(max): the map stores each candidate and its tangent (one per iteration
// of the nested space); a second map sums the tangents of the candidates equal
// to the maximum and counts them, and the tangent is their mean.
// MAX-LABEL: func.func @row_max_jvp
// MAX:         %[[V:.*]] = tensor.empty() : tensor<3x4xf64>
// MAX-NEXT:    %[[TV:.*]] = tensor.empty() : tensor<3x4xf64>
// MAX-NEXT:    %m, %[[C:.*]], %[[TC:.*]] = df.map (%i) in (3) outs(%o = %b : tensor<3xf64>, %[[CA:.*]] = %[[V]] : tensor<3x4xf64>, %[[TCA:.*]] = %[[TV]] : tensor<3x4xf64>) {
// MAX:             df.write %p, %o[%i] wcr(max) : tensor<3xf64>
// MAX-NEXT:        df.write %p, %[[CA]][%i, %j] : tensor<3x4xf64>
// MAX-NEXT:        df.write %{{.*}}, %[[TCA]][%i, %j] : tensor<3x4xf64>
// MAX:         %[[S:.*]], %[[N:.*]] = df.map (%{{.*}}) in (3) outs(
// MAX:             df.read %[[C]][%{{.*}}, %{{.*}}] : tensor<3x4xf64>
// MAX-NEXT:        df.read %[[TC]][%{{.*}}, %{{.*}}] : tensor<3x4xf64>
// MAX-NEXT:        df.read %m[%{{.*}}] : tensor<3xf64>
// MAX:             wcr(add)
// MAX:             wcr(add)
// MAX:         arith.divf
// MAX:         func.return
func.func @row_max(%w: tensor<3x4xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %m = df.map (%i) in (3) outs(%o = %b : tensor<3xf64>) {
    df.map (%j) in (4) {
      %r = df.read %w[%i, %j] : tensor<3x4xf64>
      %p = df.tasklet (%r) : (f64) -> f64 {
      ^bb0(%u: f64):
        %sq = arith.mulf %u, %u : f64
        df.yield %sq : f64
      }
      df.write %p, %o[%i] wcr(max) : tensor<3xf64>
    }
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}

// A loop carries the tangent of each float iter_arg (scalars too); the nn op
// in its body is expanded first.
// LOOP-LABEL: func.func @loop_jvp(%x: tensor<8xf64>, %s: f64, %tangent: tensor<8xf64>, %tangent_1: f64)
// LOOP:         %r, %v, %{{.*}}, %{{.*}} = scf.for %t = %c0 to %n step %c1 iter_args(%h = %x, %u = %s, %[[TH:.*]] = %tangent, %[[TU:.*]] = %tangent_1) -> (tensor<8xf64>, f64, tensor<8xf64>, f64) {
// LOOP-NOT:       nn.tanh
// LOOP:           df.read %[[TH]]
// LOOP:           scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<8xf64>, f64, tensor<8xf64>, f64
func.func @loop(%x: tensor<8xf64>, %s: f64) -> (tensor<8xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 20 : index
  %r, %v = scf.for %t = %c0 to %n step %c1 iter_args(%h = %x, %u = %s) -> (tensor<8xf64>, f64) {
    %y = nn.tanh %h : (tensor<8xf64>) -> tensor<8xf64>
    %w = arith.mulf %u, %u : f64
    scf.yield %y, %w : tensor<8xf64>, f64
  }
  func.return %r, %v : tensor<8xf64>, f64
}

// A call becomes a call of the callee's JVP function, generated once.
// CALL:       func.func private @square_jvp(%x: tensor<4xf64>, %tangent: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) attributes {autodiff.of = "square", autodiff.wrt = array<i64: 0>, autodiff.outputs = array<i64: 0>, autodiff.mode = "forward"}
// CALL-LABEL: func.func @caller_jvp
// CALL:         %y, %{{.*}} = func.call @square_jvp(%x, %tangent) : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
// CALL:         %z, %{{.*}} = func.call @square_jvp(%y, %{{.*}}) : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
// CALL-NOT:   @square_jvp_1
func.func private @square(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = nn.mul %x, %x : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  func.return %y : tensor<4xf64>
}
func.func @caller(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = func.call @square(%x) : (tensor<4xf64>) -> tensor<4xf64>
  %z = func.call @square(%y) : (tensor<4xf64>) -> tensor<4xf64>
  func.return %z : tensor<4xf64>
}

// The pass is idempotent.
// TWICE:     func.func @dot_tanh_jvp(
// TWICE-NOT: func.func @dot_tanh_jvp(

// nn ops with a rule keep their form: the product rule gives two matmuls, a
// linear op (transpose, a sum) applies to the tangent, an op without one
// (tanh) is expanded and differentiated through its maps.
// MATMUL-LABEL: func.func @matmul_jvp(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>, %tangent: tensor<5x4xf32>, %tangent_1: tensor<4x3xf32>)
// MATMUL:         %z = nn.matmul %a, %b
// MATMUL-NEXT:    %[[L:.*]] = nn.matmul %tangent, %b
// MATMUL-NEXT:    %[[R:.*]] = nn.matmul %a, %tangent_1
// MATMUL-NEXT:    %[[TZ:.*]] = nn.add %[[L]], %[[R]]
// MATMUL-NEXT:    %t = nn.transpose %z
// MATMUL-NEXT:    %[[TT:.*]] = nn.transpose %[[TZ]]
// MATMUL-NOT:     nn.tanh
// MATMUL:         df.map
// MATMUL:           df.read %[[TT]]
// MATMUL:         %s = nn.reduce %{{.*}} {kind = "sum"
// MATMUL-NEXT:    %[[TS:.*]] = nn.reduce %{{.*}} {kind = "sum"
// MATMUL-NEXT:    func.return %s, %[[TS]]
func.func @matmul(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>) -> tensor<f32> {
  %z = nn.matmul %a, %b : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %t = nn.transpose %z {permutation = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %h = nn.tanh %t : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %s = nn.reduce %h {kind = "sum", axes = array<i64: 0, 1>} : (tensor<3x5xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
