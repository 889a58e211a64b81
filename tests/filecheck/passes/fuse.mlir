// RUN: opt-tool %s --fuse | filecheck %s

// Producer-consumer: the exp map is computed inside the sum map; the
// intermediate tensor disappears and the two tasklets merge into one.
// CHECK-LABEL: func.func @into_reduction
// CHECK:         %{{.*}} = df.map (%[[I:.*]]) in (16) outs(%{{.*}} = %{{.*}} : tensor<f32>) {
// CHECK-NEXT:      %[[V:.*]] = df.read %x[%[[I]]] : tensor<16xf32>
// CHECK-NEXT:      %[[T:.*]] = df.tasklet (%[[V]]) : (f32) -> f32 {
// CHECK:             math.exp
// CHECK:             arith.mulf
// CHECK:           df.write %[[T]], %{{.*}}[] wcr(add) : tensor<f32>
// CHECK-NOT:     df.map
// CHECK:         func.return
func.func @into_reduction(%x: tensor<16xf32>) -> tensor<f32> {
  %e0 = tensor.empty() : tensor<16xf32>
  %e = df.map (%i) in (16) outs(%o = %e0 : tensor<16xf32>) {
    %v = df.read %x[%i] : tensor<16xf32>
    %r = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %y = math.exp %a : f32
      df.yield %y : f32
    }
    df.write %r, %o[%i] : tensor<16xf32>
  } -> tensor<16xf32>
  %z = arith.constant dense<0.0> : tensor<f32>
  %s = df.map (%i) in (16) outs(%o = %z : tensor<f32>) {
    %v = df.read %e[%i] : tensor<16xf32>
    %r = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %y = arith.mulf %a, %a : f32
      df.yield %y : f32
    }
    df.write %r, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %s : tensor<f32>
}

// Refused: the consumer reads the intermediate at a shifted index.
// CHECK-LABEL: func.func @shifted_read
// CHECK-COUNT-2: df.map
func.func @shifted_read(%x: tensor<16xf32>) -> tensor<15xf32> {
  %e0 = tensor.empty() : tensor<16xf32>
  %e = df.map (%i) in (16) outs(%o = %e0 : tensor<16xf32>) {
    %v = df.read %x[%i] : tensor<16xf32>
    df.write %v, %o[%i] : tensor<16xf32>
  } -> tensor<16xf32>
  %f0 = tensor.empty() : tensor<15xf32>
  %f = df.map (%i) in (15) outs(%o = %f0 : tensor<15xf32>) {
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %v = df.read %e[%j] : tensor<16xf32>
    df.write %v, %o[%i] : tensor<15xf32>
  } -> tensor<15xf32>
  func.return %f : tensor<15xf32>
}

// Refused: the producer is a reduction, whose value is final only after all iterations.
// CHECK-LABEL: func.func @reduction_producer
// CHECK-COUNT-2: df.map
func.func @reduction_producer(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %s = df.map (%i, %j) in (4, 4) outs(%o = %z : tensor<4xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x4xf32>
    df.write %v, %o[%i] wcr(add) : tensor<4xf32>
  } -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<4xf32>
  %d = df.map (%i) in (4) outs(%o = %e0 : tensor<4xf32>) {
    %v = df.read %s[%i] : tensor<4xf32>
    df.write %v, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// Siblings: two maps over one space reading the same input become one map.
// CHECK-LABEL: func.func @siblings
// CHECK:         %{{.*}}, %{{.*}} = df.map (%{{.*}}) in (8) outs(%{{.*}} = %{{.*}} : tensor<f32>, %{{.*}} = %{{.*}} : tensor<f32>) {
// CHECK:           wcr(max)
// CHECK:           wcr(min)
// CHECK-NOT:     df.map
func.func @siblings(%x: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %lo = arith.constant dense<0xFF800000> : tensor<f32>
  %hi = arith.constant dense<0x7F800000> : tensor<f32>
  %mx = df.map (%i) in (8) outs(%o = %lo : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(max) : tensor<f32>
  } -> tensor<f32>
  %mn = df.map (%i) in (8) outs(%o = %hi : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(min) : tensor<f32>
  } -> tensor<f32>
  func.return %mx, %mn : tensor<f32>, tensor<f32>
}

// Siblings need not be adjacent: the ops between (here a map over another space
// that builds the second's initial value) must not use the first's results;
// the merged map takes the second's place.
// CHECK-LABEL: func.func @siblings_apart
// CHECK:         df.map (%{{.*}}) in (4)
// CHECK:         %{{.*}}, %{{.*}} = df.map (%{{.*}}) in (8) outs(%{{.*}} = %{{.*}} : tensor<f32>, %{{.*}} = %{{.*}} : tensor<f32>) {
// CHECK-NOT:     df.map
func.func @siblings_apart(%x: tensor<8xf32>, %y: tensor<4xf32>) -> (tensor<f32>, tensor<f32>) {
  %z = arith.constant dense<0.0> : tensor<f32>
  %a = df.map (%i) in (8) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  %init = df.map (%i) in (4) outs(%o = %z : tensor<f32>) {
    %v = df.read %y[%i] : tensor<4xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  %b = df.map (%i) in (8) outs(%o = %init : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(max) : tensor<f32>
  } -> tensor<f32>
  func.return %a, %b : tensor<f32>, tensor<f32>
}

// Refused: the map between uses the first's result.
// CHECK-LABEL: func.func @siblings_apart_dependent
// CHECK-COUNT-3: df.map
// CHECK-NOT:     df.map
// CHECK:         func.return
func.func @siblings_apart_dependent(%x: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %z = arith.constant dense<0.0> : tensor<f32>
  %a = df.map (%i) in (8) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  %init = df.map (%i) in (1) outs(%o = %a : tensor<f32>) {
    %v = df.read %a[] : tensor<f32>
    df.write %v, %o[] : tensor<f32>
  } -> tensor<f32>
  %b = df.map (%i) in (8) outs(%o = %init : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(max) : tensor<f32>
  } -> tensor<f32>
  func.return %a, %b : tensor<f32>, tensor<f32>
}

// Refused: different iteration spaces.
// CHECK-LABEL: func.func @different_spaces
// CHECK-COUNT-2: df.map
func.func @different_spaces(%x: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %z = arith.constant dense<0.0> : tensor<f32>
  %a = df.map (%i) in (8) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  %b = df.map (%i) in (4) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %a, %b : tensor<f32>, tensor<f32>
}

// Library ops are expanded first, so fusion sees through them: exp and mul
// become one map whose tasklet computes both.
// CHECK-LABEL: func.func @library
// CHECK-NOT:     nn.
// CHECK:         df.map
// CHECK:           math.exp
// CHECK-NEXT:      arith.mulf
// CHECK-NOT:     df.map
// CHECK:         func.return
func.func @library(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %e = nn.exp %x : (tensor<16xf32>) -> tensor<16xf32>
  %s = nn.mul %e, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %s : tensor<16xf32>
}

// Refused: the consumer tests the produced value for equality (a max
// gradient's tie test) and the producer stays for another reader, so the
// value is read from memory: a recomputation need not be bit-equal.
// CHECK-LABEL: func.func @equality_reads_stored
// CHECK:         %e = df.map
// CHECK:         %m = df.map
// CHECK-NEXT:      df.read %e[
// CHECK-NEXT:      df.write {{.*}} wcr(max)
// CHECK:         %n = df.map
// CHECK-NEXT:      df.read %e[
// CHECK:           arith.cmpf oeq
// CHECK:         func.return
func.func @equality_reads_stored(%x: tensor<8xf64>) -> (tensor<f64>, tensor<f64>) {
  %e0 = tensor.empty() : tensor<8xf64>
  %e = df.map (%i) in (8) outs(%o = %e0 : tensor<8xf64>) {
    %v = df.read %x[%i] : tensor<8xf64>
    %r = df.tasklet (%v) : (f64) -> f64 {
    ^bb0(%a: f64):
      %y = arith.mulf %a, %a : f64
      %z = arith.addf %y, %a : f64
      df.yield %z : f64
    }
    df.write %r, %o[%i] : tensor<8xf64>
  } -> tensor<8xf64>
  %lo = arith.constant dense<-1.0e+30> : tensor<f64>
  %m = df.map (%i) in (8) outs(%o = %lo : tensor<f64>) {
    %v = df.read %e[%i] : tensor<8xf64>
    df.write %v, %o[] wcr(max) : tensor<f64>
  } -> tensor<f64>
  %z = arith.constant dense<0.0> : tensor<f64>
  %n = df.map (%i) in (8) outs(%o = %z : tensor<f64>) {
    %v = df.read %e[%i] : tensor<8xf64>
    %mx = df.read %m[] : tensor<f64>
    %h = df.tasklet (%v, %mx) : (f64, f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %q = arith.cmpf oeq, %a, %b : f64
      %one = arith.constant 1.0 : f64
      %zero = arith.constant 0.0 : f64
      %s = arith.select %q, %one, %zero : f64
      df.yield %s : f64
    }
    df.write %h, %o[] wcr(add) : tensor<f64>
  } -> tensor<f64>
  func.return %m, %n : tensor<f64>, tensor<f64>
}
