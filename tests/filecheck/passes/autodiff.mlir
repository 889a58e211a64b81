// RUN: opt-tool %s '--autodiff{func=matmul_sum}' | filecheck %s --check-prefix=MATMUL
// RUN: opt-tool %s '--autodiff{func=stencil}' | filecheck %s --check-prefix=STENCIL
// RUN: opt-tool %s '--autodiff{func=matmul_sum wrt=1}' | filecheck %s --check-prefix=WRT
// RUN: opt-tool %s '--autodiff{func=matmul_sum split=true}' | filecheck %s --check-prefix=SPLIT
// RUN: opt-tool %s '--autodiff{func=twice}' --canonicalize --cse | filecheck %s --check-prefix=CSE
// RUN: opt-tool %s '--autodiff{func=linear_loop}' | filecheck %s --check-prefix=LINEAR
// RUN: opt-tool %s '--autodiff{func=tanh_loop}' | filecheck %s --check-prefix=TAPE
// RUN: opt-tool %s '--autodiff{func=tanh_loop recompute=true}' | filecheck %s --check-prefix=RECOMPUTE
// RUN: opt-tool %s '--autodiff{func=tanh_loop split=true}' | filecheck %s --check-prefix=SPLIT-LOOP
// RUN: opt-tool %s '--autodiff{func=linear_loop split=true}' | filecheck %s --check-prefix=SPLIT-LINEAR
// RUN: opt-tool %s '--autodiff{func=nested_loops}' | filecheck %s --check-prefix=NESTED
// RUN: opt-tool %s '--autodiff{func=one_trip}' | filecheck %s --check-prefix=ONE-TRIP
// RUN: opt-tool %s '--autodiff{func=step}' | filecheck %s --check-prefix=STEP
// RUN: opt-tool %s '--autodiff{func=overwrite}' | filecheck %s --check-prefix=OVERWRITE
// RUN: opt-tool %s '--autodiff{func=loop_in_map}' | filecheck %s --check-prefix=LOOP-IN-MAP
// RUN: opt-tool %s '--autodiff{func=matmul_sum}' '--autodiff{func=matmul_sum}' --autodiff | filecheck %s --check-prefix=TWICE
// RUN: opt-tool %s '--autodiff{func=row_max}' | filecheck %s --check-prefix=ROW-MAX
// RUN: opt-tool %s '--autodiff{func=conv}' --canonicalize --cse | filecheck %s --check-prefix=CONV
// RUN: opt-tool %s '--autodiff{func=conv_overpadded}' --canonicalize --cse | filecheck %s --check-prefix=CONV-EXPANDED

// The gradient of nn.matmul is two matmuls with transposes, not loops; the
// sum's gradient is the seed broadcast back to the summed shape.
// MATMUL-LABEL: func.func @matmul_sum_grad(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>, %seed: tensor<f32>) -> (tensor<f32>, tensor<5x4xf32>, tensor<4x3xf32>)
// MATMUL:         %[[S:.*]] = nn.reshape %seed : (tensor<f32>) -> tensor<1x1xf32>
// MATMUL-NEXT:    nn.broadcast %[[S]] : (tensor<1x1xf32>) -> tensor<5x3xf32>
// MATMUL:         %[[BT:.*]] = nn.transpose %b {permutation = array<i64: 1, 0>}
// MATMUL-NEXT:    %[[GA:.*]] = nn.matmul %{{.*}}, %[[BT]]
// MATMUL-NEXT:    %[[AT:.*]] = nn.transpose %a {permutation = array<i64: 1, 0>}
// MATMUL-NEXT:    %[[GB:.*]] = nn.matmul %[[AT]], %{{.*}}
// MATMUL-NEXT:    func.return %{{.*}}, %[[GA]], %[[GB]]
func.func @matmul_sum(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>) -> tensor<f32> {
  %z = nn.matmul %a, %b : (tensor<5x4xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %s = nn.reduce %z {kind = "sum", axes = array<i64: 0, 1>} : (tensor<5x3xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// Only the requested gradient is built: no transpose of %b for wrt=1.
// WRT-LABEL: func.func @matmul_sum_grad(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>, %seed: tensor<f32>) -> (tensor<f32>, tensor<4x3xf32>)
// WRT-NOT:     nn.transpose %b
// WRT:         nn.transpose %a
// WRT-NOT:     nn.transpose %b

// Split mode: forward returns the results and the saved values, backward takes them.
// SPLIT-LABEL: func.func @matmul_sum_fwd(%a: tensor<5x4xf32>, %b: tensor<4x3xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<5x4xf32>) attributes {autodiff.saved = ["%b (argument #1)", "%a (argument #0)"], autodiff.of = "matmul_sum", autodiff.wrt = array<i64: 0, 1>, autodiff.outputs = array<i64: 0>}
// SPLIT:         func.return %s, %b, %a
// SPLIT-LABEL: func.func @matmul_sum_bwd(%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<5x4xf32>, %{{.*}}: tensor<f32>) -> (tensor<5x4xf32>, tensor<4x3xf32>) attributes {autodiff.saved = [{{.*}}], autodiff.of = "matmul_sum", autodiff.wrt = array<i64: 0, 1>, autodiff.outputs = array<i64: 0>}
// SPLIT-NOT:     nn.matmul %a, %b

// A stencil is linear: its adjoint scatters the seed with wcr(add) writes and
// a tasklet that needs none of the forward values (0.2 * seed).
// STENCIL-LABEL: func.func @stencil_grad
// STENCIL:         df.map (%{{.*}}) in (6) outs(%{{.*}} = %{{.*}} : tensor<8xf64>)
// STENCIL:           df.tasklet
// STENCIL:             arith.constant 2.000000e-01 : f64
// STENCIL:           wcr(add) : tensor<8xf64>
// STENCIL:           wcr(add) : tensor<8xf64>
// STENCIL:           wcr(add) : tensor<8xf64>
func.func @stencil(%x: tensor<8xf64>) -> tensor<6xf64> {
  %e = tensor.empty() : tensor<6xf64>
  %y = df.map (%i) in (6) outs(%o = %e : tensor<6xf64>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %i1 = arith.addi %i, %c1 : index
    %i2 = arith.addi %i, %c2 : index
    %l = df.read %x[%i] : tensor<8xf64>
    %m = df.read %x[%i1] : tensor<8xf64>
    %r = df.read %x[%i2] : tensor<8xf64>
    %s = df.tasklet (%l, %m, %r) : (f64, f64, f64) -> f64 {
    ^bb0(%a: f64, %b: f64, %c: f64):
      %k = arith.constant 0.2 : f64
      %t = arith.addf %a, %b : f64
      %u = arith.addf %t, %c : f64
      %v = arith.mulf %k, %u : f64
      df.yield %v : f64
    }
    df.write %s, %o[%i] : tensor<6xf64>
  } -> tensor<6xf64>
  func.return %y : tensor<6xf64>
}

// The forward exp is computed once after cse, though the backward pass uses it too.
// CSE-LABEL: func.func @twice_grad
// CSE-COUNT-1: nn.exp
// CSE-NOT:     nn.exp
func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %y = nn.mul %e, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// A linear time loop keeps nothing for its reversal: the backward loop never
// reads a forward iteration's value (no tape, no rerun of the forward loop).
// LINEAR-LABEL: func.func @linear_loop_grad
// LINEAR:         scf.for {{.*}} iter_args(%{{.*}} = %x) -> (tensor<8xf64>) {
// LINEAR:         scf.for {{.*}} -> (tensor<8xf64>) {
// LINEAR-NOT:     scf.for
// LINEAR-NOT:     tensor<20x8xf64>
// LINEAR:         func.return
func.func @linear_loop(%x: tensor<8xf64>) -> tensor<8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 20 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<8xf64>) {
    %k = arith.constant dense<0.5> : tensor<8xf64>
    %y = nn.mul %h, %k : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
    scf.yield %y : tensor<8xf64>
  }
  func.return %r : tensor<8xf64>
}

// A nonlinear one records each iteration's input on a tape (one more iter_arg
// of the forward loop, row t written by a df.map) and the backward loop reads
// row n-1-k back; with recompute=true it reruns the forward loop instead.
// TAPE-LABEL: func.func @tanh_loop_grad
// TAPE:         %[[E:.*]] = tensor.empty() : tensor<20x8xf64>
// TAPE:         %{{.*}}, %[[TAPE:.*]] = scf.for %[[T:.*]] = {{.*}} iter_args(%[[H:.*]] = %x, %[[REC:.*]] = %[[E]]) -> (tensor<8xf64>, tensor<20x8xf64>) {
// TAPE:           df.map (%[[I:.*]]) in (8) outs(%[[O:.*]] = %[[REC]] : tensor<20x8xf64>) {
// TAPE-NEXT:        %[[V:.*]] = df.read %[[H]][%[[I]]] : tensor<8xf64>
// TAPE-NEXT:        df.write %[[V]], %[[O]][%{{.*}}, %[[I]]] : tensor<20x8xf64>
// TAPE:         scf.for
// TAPE:           df.read %[[TAPE]][%{{.*}}, %{{.*}}] : tensor<20x8xf64>
// TAPE-NOT:     scf.for
// TAPE:         func.return
// RECOMPUTE-LABEL: func.func @tanh_loop_grad
// RECOMPUTE-NOT:   tensor<20x8xf64>
// RECOMPUTE:       scf.for
// RECOMPUTE:       scf.for
// RECOMPUTE:         scf.for
// RECOMPUTE:       func.return
func.func @tanh_loop(%x: tensor<8xf64>) -> tensor<8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 20 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<8xf64>) {
    %y = nn.tanh %h : (tensor<8xf64>) -> tensor<8xf64>
    scf.yield %y : tensor<8xf64>
  }
  func.return %r : tensor<8xf64>
}

// Split on a loop function: the tape is the only saved value; the loop
// bounds are rematerialised constants in the backward function.
// SPLIT-LOOP-LABEL: func.func @tanh_loop_fwd(%x: tensor<8xf64>) -> (tensor<8xf64>, tensor<20x8xf64>) attributes {autodiff.saved = ["%{{.*}} = scf.for"]
// SPLIT-LOOP:         %{{.*}}, %[[ROWS:.*]] = scf.for
// SPLIT-LOOP:         func.return %{{.*}}, %[[ROWS]] : tensor<8xf64>, tensor<20x8xf64>
// SPLIT-LOOP-LABEL: func.func @tanh_loop_bwd(%{{.*}}: tensor<20x8xf64>, %{{.*}}: tensor<8xf64>) -> tensor<8xf64>
// SPLIT-LOOP:         arith.constant 20 : index
// SPLIT-LOOP:         scf.for
// SPLIT-LOOP-NOT:     scf.for
// SPLIT-LOOP:         func.return

// A linear loop saves nothing at all.
// SPLIT-LINEAR-LABEL: func.func @linear_loop_fwd(%x: tensor<8xf64>) -> tensor<8xf64> attributes {autodiff.saved = []
// SPLIT-LINEAR-LABEL: func.func @linear_loop_bwd(%{{.*}}: tensor<8xf64>) -> tensor<8xf64>

// Nested loops whose inner body needs a tape: the outer loop tapes its
// iter_arg, the inner forward loop is rerun in each backward outer iteration
// and keeps a tape of its own (per outer iteration).
// NESTED-LABEL: func.func @nested_loops_grad
// NESTED:         tensor.empty() : tensor<2x3xf64>
// NESTED:         scf.for {{.*}} -> (tensor<3xf64>, tensor<2x3xf64>) {
// NESTED:           scf.for {{.*}} -> (tensor<3xf64>) {
// NESTED:         scf.for
// NESTED:           tensor.empty() : tensor<4x3xf64>
// NESTED:           scf.for {{.*}} -> (tensor<3xf64>, tensor<4x3xf64>) {
// NESTED:           scf.for
// NESTED:         func.return
func.func @nested_loops(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %t = %c0 to %c2 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %s = scf.for %u = %c0 to %c4 step %c1 iter_args(%g = %h) -> (tensor<3xf64>) {
      %y = nn.tanh %g : (tensor<3xf64>) -> tensor<3xf64>
      scf.yield %y : tensor<3xf64>
    }
    scf.yield %s : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}

// A one-trip loop keeps a one-row tape.
// ONE-TRIP-LABEL: func.func @one_trip_grad
// ONE-TRIP:         scf.for {{.*}} -> (tensor<3xf64>, tensor<1x3xf64>)
// ONE-TRIP:         func.return
func.func @one_trip(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %c1 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %y = nn.tanh %h : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}

// Running autodiff again adds nothing for functions already differentiated:
// one @matmul_sum_grad, marked with what it is the gradient of.
// TWICE:         func.func @matmul_sum_grad({{.*}} attributes {autodiff.of = "matmul_sum", autodiff.wrt = array<i64: 0, 1>, autodiff.outputs = array<i64: 0>}
// TWICE-NOT:     func.func @matmul_sum_grad
// TWICE:         func.func @stencil_grad
// TWICE-NOT:     func.func @matmul_sum_grad

// floor has derivative 0 (as in JAX and PyTorch): d (floor(x) * x) = floor(x).
// STEP-LABEL: func.func @step_grad
// STEP:         df.tasklet
// STEP:         ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32):
// STEP-NEXT:      %[[F:.*]] = math.floor %[[X]] : f32
// STEP-NEXT:      %[[G:.*]] = arith.mulf %[[S]], %[[F]] : f32
// STEP-NEXT:      df.yield %[[G]] : f32
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = df.map (%i) in (4) outs(%o = %e : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    %r = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %t = math.floor %a : f32
      %u = arith.mulf %t, %a : f32
      df.yield %u : f32
    }
    df.write %r, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// Two plain writes of one iteration may hit the same element (at j = 0 here):
// the last write wins, so the first write's adjoint is zeroed where the
// indices coincide; the last write's is not masked.
// OVERWRITE-LABEL: func.func @overwrite_grad
// OVERWRITE:         df.map (%[[I:.*]], %[[J:.*]]) in (4, 4) outs(%{{.*}} = %{{.*}} : tensor<4x4xf64>)
// OVERWRITE:           %[[K:.*]] = arith.addi %[[I]], %[[J]] : index
// OVERWRITE:           %[[G2:.*]] = df.read %seed[%[[I]], %[[K]]] : tensor<8x8xf64>
// OVERWRITE-NOT:       arith.cmpi
// OVERWRITE:           %[[G1:.*]] = df.read %seed[%[[K]], %[[I]]] : tensor<8x8xf64>
// OVERWRITE-NEXT:      %[[E0:.*]] = arith.cmpi eq, %[[K]], %[[I]] : index
// OVERWRITE-NEXT:      %[[E1:.*]] = arith.cmpi eq, %[[I]], %[[K]] : index
// OVERWRITE-NEXT:      %[[HIT:.*]] = arith.andi %[[E0]], %[[E1]] : i1
// OVERWRITE-NEXT:      df.tasklet (%[[G1]], %[[HIT]]) : (f64, i1) -> f64
// OVERWRITE:             arith.select
func.func @overwrite(%v: tensor<4x4xf64>) -> tensor<8x8xf64> {
  %z = arith.constant dense<0.0> : tensor<8x8xf64>
  %c = df.map (%i, %j) in (4, 4) outs(%o = %z : tensor<8x8xf64>) {
    %k = arith.addi %i, %j : index
    %a = df.read %v[%i, %j] : tensor<4x4xf64>
    df.write %a, %o[%k, %i] : tensor<8x8xf64>
    df.write %a, %o[%i, %k] : tensor<8x8xf64>
  } -> tensor<8x8xf64>
  func.return %c : tensor<8x8xf64>
}

// A loop over scalars in a map body runs backwards inside the backward map:
// iteration k reruns the forward loop up to t = n-1-k, reverses the body, and
// sends the read's adjoint to the gradient with wcr(add) from inside the loop.
// LOOP-IN-MAP-LABEL: func.func @loop_in_map_grad
// LOOP-IN-MAP:         df.map (%{{.*}}) in (3) outs(%[[GX:.*]] = %{{.*}} : tensor<3x4xf64>)
// LOOP-IN-MAP:           %[[SEED:.*]] = df.read %seed
// LOOP-IN-MAP:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[SEED]]) -> (f64)
// LOOP-IN-MAP:             arith.muli
// LOOP-IN-MAP-NEXT:        %[[T:.*]] = arith.addi
// LOOP-IN-MAP:             scf.for %{{.*}} = %{{.*}} to %[[T]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64)
// LOOP-IN-MAP:             df.write %{{.*}}, %[[GX]][%{{.*}}, %[[T]]] wcr(add) : tensor<3x4xf64>
// LOOP-IN-MAP:             scf.yield %{{.*}} : f64
func.func @loop_in_map(%x: tensor<3x4xf64>) -> tensor<3xf64> {
  %e = tensor.empty() : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %e : tensor<3xf64>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %z = arith.constant 1.0 : f64
    %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (f64) {
      %v = df.read %x[%i, %k] : tensor<3x4xf64>
      %p = df.tasklet (%acc, %v) : (f64, f64) -> f64 {
      ^bb0(%a: f64, %b: f64):
        %q = arith.mulf %a, %b : f64
        %s = math.sin %q : f64
        df.yield %s : f64
      }
      scf.yield %p : f64
    }
    df.write %r, %o[%i] : tensor<3xf64>
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}

// The forward max also stores each candidate (one per iteration, the nested
// map's too); the tie count and the backward compare those stored values with
// the maximum, never a recomputation of them.
// ROW-MAX-LABEL: func.func @row_max_grad
// ROW-MAX:         %[[E:.*]] = tensor.empty() : tensor<3x4xf64>
// ROW-MAX:         %m, %[[C:.*]] = df.map (%[[I:.*]]) in (3) outs(%o = %{{.*}} : tensor<3xf64>, %[[CA:.*]] = %[[E]] : tensor<3x4xf64>)
// ROW-MAX:           df.map (%[[J:.*]]) in (4)
// ROW-MAX:             df.write %[[P:.*]], %o[%[[I]]] wcr(max) : tensor<3xf64>
// ROW-MAX-NEXT:        df.write %[[P]], %[[CA]][%[[I]], %[[J]]] : tensor<3x4xf64>
// ROW-MAX:         df.read %[[C]][%{{.*}}, %{{.*}}] : tensor<3x4xf64>
// ROW-MAX:         arith.cmpf oeq
// ROW-MAX:         df.read %[[C]][%{{.*}}, %{{.*}}] : tensor<3x4xf64>
// ROW-MAX:         arith.cmpf oeq
func.func @row_max(%x: tensor<3x4xf64>) -> tensor<3xf64> {
  %lo = arith.constant dense<-1.0e+30> : tensor<3xf64>
  %m = df.map (%i) in (3) outs(%o = %lo : tensor<3xf64>) {
    df.map (%j) in (4) {
      %v = df.read %x[%i, %j] : tensor<3x4xf64>
      %p = df.tasklet (%v) : (f64) -> f64 {
      ^bb0(%a: f64):
        %s = math.sin %a : f64
        df.yield %s : f64
      }
      df.write %p, %o[%i] wcr(max) : tensor<3xf64>
    }
  } -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}

// A convolution with few output features has a backward rule (rules_conv.py).
// The input gradient is the transposed convolution: the seed spread 2 apart
// into zeros from (3 - 1) - 1 = 1 on, convolved with stride 1 by the kernel
// with its taps reversed (2 - t) and its features swapped (3x2 -> 2x3). The
// kernel gradient accumulates seed * padded input with the output positions
// innermost.
// CONV-LABEL: func.func @conv_grad
// CONV:         %[[SPREAD:.*]] = df.map (%{{.*}}, %{{.*}}, %[[Y:.*]], %[[X:.*]]) in (1, 3, 4, 4) outs(%[[SO:.*]] = %{{.*}} : tensor<1x3x9x9xf64>)
// CONV:           df.read %seed
// CONV:           %[[TWO:.*]] = arith.constant 2 : index
// CONV:           %[[Y2:.*]] = arith.muli %[[Y]], %[[TWO]] : index
// CONV:           %[[ONE:.*]] = arith.constant 1 : index
// CONV:           %[[YS:.*]] = arith.addi %[[Y2]], %[[ONE]] : index
// CONV:           df.write %{{.*}}, %[[SO]][%{{.*}}, %{{.*}}, %[[YS]], %{{.*}}] : tensor<1x3x9x9xf64>
// CONV:         %[[FLIPPED:.*]] = df.map (%{{.*}}, %{{.*}}, %{{.*}}, %[[T:.*]], %{{.*}}) in (1, 2, 3, 3, 3) outs(%{{.*}} = %{{.*}} : tensor<2x3x3x3xf64>)
// CONV:           %[[MINUS:.*]] = arith.constant -1 : index
// CONV:           %[[NT:.*]] = arith.muli %[[T]], %[[MINUS]] : index
// CONV:           %[[TWO2:.*]] = arith.constant 2 : index
// CONV:           %[[REV:.*]] = arith.addi %[[NT]], %[[TWO2]] : index
// CONV:           df.read %k[%{{.*}}, %{{.*}}, %[[REV]], %{{.*}}] : tensor<3x2x3x3xf64>
// CONV:         nn.convolution %[[SPREAD]], %[[FLIPPED]] {{.*}}window_strides = array<i64: 1, 1>, padding_low = array<i64: 0, 0>, padding_high = array<i64: 0, 0>{{.*}} : (tensor<1x3x9x9xf64>, tensor<2x3x3x3xf64>) -> tensor<1x2x7x7xf64>
// CONV:         df.map (%[[N:.*]], %[[O:.*]], %[[C:.*]], %[[KY:.*]], %[[KX:.*]], %[[OY:.*]], %[[OX:.*]]) in (1, 3, 2, 3, 3, 4, 4) outs(%[[DK:.*]] = %{{.*}} : tensor<3x2x3x3xf64>)
// CONV:           df.read %seed[%[[N]], %[[O]], %[[OY]], %[[OX]]] : tensor<1x3x4x4xf64>
// CONV:           arith.mulf
// CONV:           df.write %{{.*}}, %[[DK]][%[[O]], %[[C]], %[[KY]], %[[KX]]] wcr(add) : tensor<3x2x3x3xf64>
func.func @conv(%x: tensor<1x2x7x7xf64>, %k: tensor<3x2x3x3xf64>) -> tensor<1x3x4x4xf64> {
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 2, 2>, padding_low = array<i64: 1, 1>, padding_high = array<i64: 1, 1>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x2x7x7xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x4x4xf64>
  func.return %r : tensor<1x3x4x4xf64>
}

// Padding wider than the kernel reaches (2 > 2 - 1): the rule declines, and
// autodiff reverses the direct expansion (one map writing both gradients).
// CONV-EXPANDED-LABEL: func.func @conv_overpadded_grad
// CONV-EXPANDED:         df.map ({{.*}}) in (1, 1, 2, 2, 8, 8, 3, 2)
// CONV-EXPANDED:           df.write %{{.*}} wcr(add) : tensor<3x2x2x2xf64>
// CONV-EXPANDED:           df.write %{{.*}} wcr(add) : tensor<1x2x9x9xf64>
// CONV-EXPANDED-NOT:     nn.convolution
func.func @conv_overpadded(%x: tensor<1x2x5x5xf64>, %k: tensor<3x2x2x2xf64>) -> tensor<1x3x8x8xf64> {
  %r = nn.convolution %x, %k {input_dimensions = array<i64: 0, 1, 2, 3>, kernel_dimensions = array<i64: 0, 1, 2, 3>, output_dimensions = array<i64: 0, 1, 2, 3>, window_strides = array<i64: 1, 1>, padding_low = array<i64: 2, 2>, padding_high = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<1x2x5x5xf64>, tensor<3x2x2x2xf64>) -> tensor<1x3x8x8xf64>
  func.return %r : tensor<1x3x8x8xf64>
}
