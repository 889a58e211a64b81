// RUN: opt-tool %s --scatter-to-gather | filecheck %s
// RUN: opt-tool %s --scatter-to-gather --bufferize --lower-dataflow | filecheck %s --check-prefix=LOWERED

// The adjoint of a 3-point stencil: three wcr(add) writes at offsets 0, 1, 2
// into zeros. It becomes a gather over the output: each element recomputes the
// value of iteration p - c (clamped into 0..7) for each offset c, keeps the
// ones that exist (guards only where p - c can leave the space) and sums them
// with one plain write. The map's other output stays with it.
// CHECK-LABEL: func.func @stencil_adjoint
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<10xf32>
// CHECK-NEXT:    %[[G:.*]] = df.map (%[[P:.*]]) in (10) outs(%[[O:.*]] = %[[E]] : tensor<10xf32>) {
// CHECK-NOT:       wcr
// CHECK:           arith.subi %[[P]]
// CHECK:           arith.cmpi sge
// CHECK:           arith.maxsi
// CHECK:           arith.cmpi slt
// CHECK:           arith.minsi
// CHECK:           %[[T:.*]] = df.tasklet ({{.*}}) : ({{.*}}, i1, i1, i1) -> f32 {
// CHECK:             arith.select
// CHECK:             arith.select
// CHECK:             arith.select
// CHECK:           df.write %[[T]], %[[O]][%[[P]]] : tensor<10xf32>
// CHECK:         df.map (%{{.*}}) in (8) outs(%{{.*}} = %{{.*}} : tensor<8xf32>) {
// CHECK-NOT:       wcr
// CHECK:         } -> tensor<8xf32>
// CHECK:         func.return %[[G]]

// LOWERED-LABEL: func.func @stencil_adjoint
// LOWERED-NOT:   memref.copy
// LOWERED-NOT:   scf.parallel
func.func @stencil_adjoint(%g: tensor<8xf32>) -> (tensor<10xf32>, tensor<8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zeros = arith.constant dense<0.0> : tensor<10xf32>
  %empty = tensor.empty() : tensor<8xf32>
  %r, %s = df.map (%i) in (8) outs(%o = %zeros : tensor<10xf32>, %q = %empty : tensor<8xf32>) {
    %v = df.read %g[%i] : tensor<8xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %k = arith.constant 2.0 : f32
      %m = arith.mulf %a, %k : f32
      df.yield %m : f32
    }
    %i1 = arith.addi %i, %c1 : index
    %i2 = arith.addi %i, %c2 : index
    df.write %w, %o[%i] wcr(add) : tensor<10xf32>
    df.write %w, %o[%i1] wcr(add) : tensor<10xf32>
    df.write %v, %o[%i2] wcr(add) : tensor<10xf32>
    df.write %v, %q[%i] : tensor<8xf32>
  } -> tensor<10xf32>, tensor<8xf32>
  func.return %r, %s : tensor<10xf32>, tensor<8xf32>
}

// Not rewritten: a single write (canonicalize makes injective ones plain), a
// non-zero initial value, an index that is not a translation of the variables.
// CHECK-LABEL: func.func @refusals
// CHECK-COUNT-5: wcr(add)
// CHECK-NOT:     wcr(add)
func.func @refusals(%g: tensor<8xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<16xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zeros = arith.constant dense<0.0> : tensor<10xf32>
  %ones = arith.constant dense<1.0> : tensor<10xf32>
  %zeros16 = arith.constant dense<0.0> : tensor<16xf32>
  %a = df.map (%i) in (8) outs(%o = %zeros : tensor<10xf32>) {
    %v = df.read %g[%i] : tensor<8xf32>
    df.write %v, %o[%i] wcr(add) : tensor<10xf32>
  } -> tensor<10xf32>
  %b = df.map (%i) in (8) outs(%o = %ones : tensor<10xf32>) {
    %v = df.read %g[%i] : tensor<8xf32>
    %i1 = arith.addi %i, %c1 : index
    df.write %v, %o[%i] wcr(add) : tensor<10xf32>
    df.write %v, %o[%i1] wcr(add) : tensor<10xf32>
  } -> tensor<10xf32>
  %c = df.map (%i) in (8) outs(%o = %zeros16 : tensor<16xf32>) {
    %v = df.read %g[%i] : tensor<8xf32>
    %i2 = arith.muli %i, %c2 : index
    df.write %v, %o[%i2] wcr(add) : tensor<16xf32>
    df.write %v, %o[%i] wcr(add) : tensor<16xf32>
  } -> tensor<16xf32>
  func.return %a, %b, %c : tensor<10xf32>, tensor<10xf32>, tensor<16xf32>
}
