// RUN: opt-tool %s --canonicalize | filecheck %s

// Constant operands sink into the tasklet and fold with its arithmetic; duplicate
// operands merge; a result forwarding an operand is replaced by that operand, and
// then no longer yielded; a read of a splat constant is the scalar constant.
// CHECK-LABEL: func.func @tasklets
// CHECK:         df.map (%[[I:.*]]) in (8) outs(%[[O:.*]] = %{{.*}} : tensor<8xf32>) {
// CHECK-NEXT:      %[[A:.*]] = df.read %{{.*}}[%[[I]]] : tensor<8xf32>
// CHECK-NEXT:      %[[R:.*]] = df.tasklet (%[[A]]) : (f32) -> f32 {
// CHECK-NEXT:      ^bb0(%[[P:.*]]: f32):
// CHECK-DAG:         %[[SIX:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-DAG:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:             %[[M:.*]] = arith.mulf %[[P]], %[[SIX]] : f32
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[M]], %[[P]] : f32
// CHECK-NEXT:        %[[K:.*]] = arith.addf %[[N]], %[[ONE]] : f32
// CHECK-NEXT:        df.yield %[[K]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[Z:.*]] = arith.addf %[[R]], %[[A]] : f32
// CHECK-NEXT:      df.write %[[Z]], %[[O]][%[[I]]] : tensor<8xf32>
func.func @tasklets(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %ones = arith.constant dense<1.0> : tensor<8xf32>
  %y = df.map (%i) in (8) outs(%o = %e : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
    %one = df.read %ones[%i] : tensor<8xf32>
    %r, %fwd = df.tasklet (%a, %two, %a, %one, %three) : (f32, f32, f32, f32, f32) -> (f32, f32) {
    ^bb0(%p: f32, %q: f32, %p2: f32, %s: f32, %t: f32):
      %qt = arith.mulf %q, %t : f32
      %m = arith.mulf %p, %qt : f32
      %n = arith.addf %m, %p2 : f32
      %k = arith.addf %n, %s : f32
      df.yield %k, %p : f32, f32
    }
    %z = arith.addf %r, %fwd : f32
    df.write %z, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// An empty iteration space yields the initial values; an output the body never
// touches is its initial value; the dead map then disappears.
// CHECK-LABEL: func.func @maps
// CHECK-NOT:     df.map
// CHECK:         func.return %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>
func.func @maps(%x: tensor<8xf32>, %w: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %none = df.map (%i) in (0) outs(%o = %x : tensor<8xf32>) {
    %a = df.read %w[%i] : tensor<8xf32>
    df.write %a, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  %same = df.map (%i) in (8) outs(%o = %w : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %none, %same : tensor<8xf32>, tensor<8xf32>
}

// nn: no-op shape ops vanish, chains compose, double negation cancels, and
// unused pure nn ops are erased.
// CHECK-LABEL: func.func @nn_shapes
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %x, %[[R]], %x, %[[T]] :
func.func @nn_shapes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  %n = nn.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %nn = nn.neg %n : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = nn.reshape %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %rr = nn.reshape %r : (tensor<3x2xf32>) -> tensor<6xf32>
  %t = nn.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tt = nn.transpose %t {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %ttt = nn.transpose %tt {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = nn.broadcast %tt : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %unused = nn.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %nn, %rr, %b, %ttt : tensor<2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}

// A wcr write into an output that starts as the reduction's identity becomes a
// plain write when its index is injective (the gradient writes of autodiff);
// a colliding index, a non-identity init or a second write keep the wcr.
// CHECK-LABEL: func.func @injective_reductions
// CHECK:         df.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32>
// CHECK:         df.write %{{.*}}, %{{.*}}[%{{.*}}] wcr(add) : tensor<4xf32>
// CHECK:         df.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] wcr(add) : tensor<4x8xf32>
// CHECK:         df.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] wcr(max) : tensor<4x8xf32>
// CHECK-NEXT:    df.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] wcr(max) : tensor<4x8xf32>
func.func @injective_reductions(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zeros = arith.constant dense<0.0> : tensor<4x8xf32>
  %zero_rows = arith.constant dense<0.0> : tensor<4xf32>
  %ones = arith.constant dense<1.0> : tensor<4x8xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<4x8xf32>
  %a = df.map (%i, %j) in (4, 8) outs(%o = %zeros : tensor<4x8xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x8xf32>
    %n = arith.negf %v : f32
    df.write %n, %o[%i, %j] wcr(add) : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  %b = df.map (%i, %j) in (4, 8) outs(%o = %zero_rows : tensor<4xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x8xf32>
    df.write %v, %o[%i] wcr(add) : tensor<4xf32>
  } -> tensor<4xf32>
  %c = df.map (%i, %j) in (4, 8) outs(%o = %ones : tensor<4x8xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x8xf32>
    df.write %v, %o[%i, %j] wcr(add) : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  %d = df.map (%i, %j) in (4, 8) outs(%o = %ninf : tensor<4x8xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x8xf32>
    df.write %v, %o[%i, %j] wcr(max) : tensor<4x8xf32>
    df.write %v, %o[%i, %j] wcr(max) : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  func.return %a, %b, %c, %d : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// The one read of a map that fills a box of %g with 0.0 (the adjoint of a
// partial overwrite) reads %g itself, guarded by the box; the fill map goes.
// A fill whose result is read twice stays.
// CHECK-LABEL: func.func @read_of_box_fill
// CHECK-NOT:     df.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<6x5xf32>
// CHECK:         %[[R:.*]] = df.map (%[[I:.*]], %[[J:.*]]) in (6, 5)
// CHECK:           %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      arith.cmpi sge, %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:      arith.cmpi slt, %[[I]], %[[C5]] : index
// CHECK:           arith.cmpi sge, %[[J]], %{{.*}} : index
// CHECK:           arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK:           %[[OLD:.*]] = df.read %g[%[[I]], %[[J]]] : tensor<6x5xf32>
// CHECK-NEXT:      df.tasklet (%{{.*}}, %[[OLD]]) : (i1, f32) -> f32 {
// CHECK:             arith.select
// CHECK:       func.func @box_fill_read_twice
// CHECK:         df.map (%{{.*}}, %{{.*}}) in (4, 4) outs(%{{.*}} = %g : tensor<6x5xf32>)
func.func @read_of_box_fill(%g: tensor<6x5xf32>, %x: tensor<6x5xf32>) -> tensor<6x5xf32> {
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<6x5xf32>
  %zeroed = df.map (%i, %j) in (4, 4) outs(%o = %g : tensor<6x5xf32>) {
    %i1 = arith.addi %i, %c1 : index
    %j1 = arith.addi %j, %c1 : index
    %z = arith.constant 0.0 : f32
    df.write %z, %o[%i1, %j1] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  %r = df.map (%i, %j) in (6, 5) outs(%o = %empty : tensor<6x5xf32>) {
    %a = df.read %zeroed[%i, %j] : tensor<6x5xf32>
    %b = df.read %x[%i, %j] : tensor<6x5xf32>
    %s = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%p: f32, %q: f32):
      %t = arith.addf %p, %q : f32
      df.yield %t : f32
    }
    df.write %s, %o[%i, %j] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  func.return %r : tensor<6x5xf32>
}

func.func @box_fill_read_twice(%g: tensor<6x5xf32>) -> tensor<6x5xf32> {
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<6x5xf32>
  %zeroed = df.map (%i, %j) in (4, 4) outs(%o = %g : tensor<6x5xf32>) {
    %i1 = arith.addi %i, %c1 : index
    %j1 = arith.addi %j, %c1 : index
    %z = arith.constant 0.0 : f32
    df.write %z, %o[%i1, %j1] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  %r = df.map (%i, %j) in (5, 5) outs(%o = %empty : tensor<6x5xf32>) {
    %a = df.read %zeroed[%i, %j] : tensor<6x5xf32>
    %b = df.read %zeroed[%j, %i] : tensor<6x5xf32>
    %s = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%p: f32, %q: f32):
      %t = arith.addf %p, %q : f32
      df.yield %t : f32
    }
    df.write %s, %o[%i, %j] : tensor<6x5xf32>
  } -> tensor<6x5xf32>
  func.return %r : tensor<6x5xf32>
}

// A 0-d read of a 0-d fill map stays (the box-fill rewrite has no index to
// guard; it asserted on this).
// CHECK-LABEL: func.func @zero_d_fill_read
// CHECK:         %[[F:.*]] = df.map () in () outs(%{{.*}} = %{{.*}} : tensor<f32>) {
// CHECK:           df.read %[[F]][] : tensor<f32>
func.func @zero_d_fill_read(%g: tensor<f32>, %v: f32) -> tensor<f32> {
  %empty = tensor.empty() : tensor<f32>
  %filled = df.map () in () outs(%o = %g : tensor<f32>) {
    df.write %v, %o[] : tensor<f32>
  } -> tensor<f32>
  %r = df.map () in () outs(%o = %empty : tensor<f32>) {
    %a = df.read %filled[] : tensor<f32>
    %s = df.tasklet (%a) : (f32) -> f32 {
    ^bb0(%p: f32):
      %t = arith.addf %p, %p : f32
      df.yield %t : f32
    }
    df.write %s, %o[] : tensor<f32>
  } -> tensor<f32>
  func.return %r : tensor<f32>
}

// A wcr write inside a loop of the map body runs once per loop iteration: it
// stays a reduction even though its index is injective over the map.
// CHECK-LABEL: func.func @reduction_in_a_loop
// CHECK:         scf.for
// CHECK:           df.write %{{.*}}, %{{.*}}[%{{.*}}] wcr(add) : tensor<4xf64>
func.func @reduction_in_a_loop(%x: tensor<4xf64>) -> tensor<4xf64> {
  %zero = arith.constant dense<0.0> : tensor<4xf64>
  %r = df.map (%i) in (4) outs(%o = %zero : tensor<4xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %k = %c0 to %c3 step %c1 {
      %v = df.read %x[%i] : tensor<4xf64>
      df.write %v, %o[%i] wcr(add) : tensor<4xf64>
    }
  } -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}

// An output that copies a tensor (read and written at the map's own variables,
// in order, over its whole shape) is that tensor: the copy output goes, and its
// users read the tensor itself. Autodiff keeps such copies for the backward pass.
// CHECK-LABEL: func.func @copy_output
// CHECK:         %[[MAX:.*]] = df.map (%{{.*}}, %{{.*}}) in (3, 4) outs(%{{.*}} = %{{.*}} : tensor<3xf32>) {
// CHECK-NEXT:      df.read %x
// CHECK-NEXT:      df.write %{{.*}}, %{{.*}}[%{{.*}}] wcr(max) : tensor<3xf32>
// CHECK-NEXT:    } -> tensor<3xf32>
// CHECK:         func.return %[[MAX]], %x : tensor<3xf32>, tensor<3x4xf32>
func.func @copy_output(%x: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3x4xf32>) {
  %ninf = arith.constant dense<0xFF800000> : tensor<3xf32>
  %empty = tensor.empty() : tensor<3x4xf32>
  %m, %c = df.map (%i, %j) in (3, 4) outs(%o = %ninf : tensor<3xf32>, %p = %empty : tensor<3x4xf32>) {
    %v = df.read %x[%i, %j] : tensor<3x4xf32>
    df.write %v, %o[%i] wcr(max) : tensor<3xf32>
    df.write %v, %p[%i, %j] : tensor<3x4xf32>
  } -> tensor<3xf32>, tensor<3x4xf32>
  func.return %m, %c : tensor<3xf32>, tensor<3x4xf32>
}

// Not copies: a transposed read, a map over part of the tensor, a write
// under a branch (not every iteration).
// CHECK-LABEL: func.func @not_copies
// CHECK-COUNT-3: df.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x4xf32>
// CHECK:         func.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
func.func @not_copies(%x: tensor<4x4xf32>, %b: i1) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %empty = tensor.empty() : tensor<4x4xf32>
  %t = df.map (%i, %j) in (4, 4) outs(%o = %empty : tensor<4x4xf32>) {
    %v = df.read %x[%j, %i] : tensor<4x4xf32>
    df.write %v, %o[%i, %j] : tensor<4x4xf32>
  } -> tensor<4x4xf32>
  %h = df.map (%i, %j) in (2, 4) outs(%o = %x : tensor<4x4xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x4xf32>
    df.write %v, %o[%i, %j] : tensor<4x4xf32>
  } -> tensor<4x4xf32>
  %g = df.map (%i, %j) in (4, 4) outs(%o = %empty : tensor<4x4xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x4xf32>
    scf.if %b {
      df.write %v, %o[%i, %j] : tensor<4x4xf32>
    }
  } -> tensor<4x4xf32>
  func.return %t, %h, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// An output every iteration overwrites at an injective index, with as many
// iterations as elements (a gradient's layout copy into a zeroed buffer), no
// longer reads its initial value: it starts as tensor.empty and the zero
// constant goes. The negatives keep their initial values: a write under a
// branch, an index that repeats, too few iterations, an output also read.
// CHECK-LABEL: func.func @overwritten_initial_values
// CHECK-NOT:     arith.constant dense
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<12x2xf32>
// CHECK:         df.map (%{{.*}}, %{{.*}}, %{{.*}}) in (3, 2, 4) outs(%{{.*}} = %[[E]] : tensor<12x2xf32>)
func.func @overwritten_initial_values(%x: tensor<3x2x4xf32>) -> tensor<12x2xf32> {
  %zero = arith.constant dense<0.0> : tensor<12x2xf32>
  %r = df.map (%b, %c, %w) in (3, 2, 4) outs(%o = %zero : tensor<12x2xf32>) {
    %v = df.read %x[%b, %c, %w] : tensor<3x2x4xf32>
    %four = arith.constant 4 : index
    %row = arith.muli %b, %four : index
    %i = arith.addi %row, %w : index
    df.write %v, %o[%i, %c] : tensor<12x2xf32>
  } -> tensor<12x2xf32>
  func.return %r : tensor<12x2xf32>
}

// CHECK-LABEL: func.func @kept_initial_values
// CHECK-NOT:     tensor.empty
// CHECK:         return
func.func @kept_initial_values(%g: tensor<4xf32>, %x: tensor<4xf32>, %p: i1) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %branch = df.map (%i) in (4) outs(%o = %g : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    scf.if %p {
      df.write %v, %o[%i] : tensor<4xf32>
    }
  } -> tensor<4xf32>
  %repeats = df.map (%i, %j) in (2, 2) outs(%o = %g : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    %k = arith.addi %i, %j : index
    df.write %v, %o[%k] : tensor<4xf32>
  } -> tensor<4xf32>
  %few = df.map (%i) in (3) outs(%o = %g : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  %read = df.map (%i) in (4) outs(%o = %g : tensor<4xf32>) {
    %v = df.read %o[%i] : tensor<4xf32>
    df.write %v, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %branch, %repeats, %few, %read : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A product map's read of a transposed copy reads the copy's source with the
// indices swapped, and the copy goes (contraction-to-blas then sees a GEMM
// with a transposed operand). Not in a map that is not a product, and not a
// batched read whose batch index would move.
// CHECK-LABEL: func.func @transpose_into_product
// CHECK-NOT:     df.map (%{{.*}}, %{{.*}}) in (3, 4)
// CHECK:         df.map (%[[I:.*]], %[[J:.*]], %[[K:.*]]) in (3, 2, 4)
// CHECK-NEXT:      df.read %a[%[[K]], %[[I]]] : tensor<4x3xf32>
func.func @transpose_into_product(%a: tensor<4x3xf32>, %b: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = df.map (%i, %k) in (3, 4) outs(%o = %e : tensor<3x4xf32>) {
    %v = df.read %a[%k, %i] : tensor<4x3xf32>
    df.write %v, %o[%i, %k] : tensor<3x4xf32>
  } -> tensor<3x4xf32>
  %z = arith.constant dense<0.0> : tensor<3x2xf32>
  %r = df.map (%i, %j, %k) in (3, 2, 4) outs(%o = %z : tensor<3x2xf32>) {
    %x = df.read %t[%i, %k] : tensor<3x4xf32>
    %y = df.read %b[%k, %j] : tensor<4x2xf32>
    %p = arith.mulf %x, %y : f32
    df.write %p, %o[%i, %j] wcr(add) : tensor<3x2xf32>
  } -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @transpose_kept
// CHECK:         df.read %t[
// CHECK:         df.read %bt[
// CHECK:         df.read %bt[
func.func @transpose_kept(%a: tensor<4x3xf32>, %c: tensor<2x4x3xf32>) -> (tensor<3x4xf32>, tensor<4x2x3xf32>) {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = df.map (%i, %k) in (3, 4) outs(%o = %e : tensor<3x4xf32>) {
    %v = df.read %a[%k, %i] : tensor<4x3xf32>
    df.write %v, %o[%i, %k] : tensor<3x4xf32>
  } -> tensor<3x4xf32>
  %r = df.map (%i, %k) in (3, 4) outs(%o = %e : tensor<3x4xf32>) {
    %x = df.read %t[%i, %k] : tensor<3x4xf32>
    %s = arith.addf %x, %x : f32
    df.write %s, %o[%i, %k] : tensor<3x4xf32>
  } -> tensor<3x4xf32>
  %e3 = tensor.empty() : tensor<4x2x3xf32>
  %bt = df.map (%k, %b, %i) in (4, 2, 3) outs(%o = %e3 : tensor<4x2x3xf32>) {
    %v = df.read %c[%b, %k, %i] : tensor<2x4x3xf32>
    df.write %v, %o[%k, %b, %i] : tensor<4x2x3xf32>
  } -> tensor<4x2x3xf32>
  %z = arith.constant dense<0.0> : tensor<4x2x3xf32>
  %q = df.map (%b, %i, %j, %k) in (4, 2, 3, 3) outs(%o = %z : tensor<4x2x3xf32>) {
    %x = df.read %bt[%b, %i, %k] : tensor<4x2x3xf32>
    %y = df.read %bt[%b, %i, %j] : tensor<4x2x3xf32>
    %p = arith.mulf %x, %y : f32
    df.write %p, %o[%b, %i, %j] wcr(add) : tensor<4x2x3xf32>
  } -> tensor<4x2x3xf32>
  func.return %r, %q : tensor<3x4xf32>, tensor<4x2x3xf32>
}
