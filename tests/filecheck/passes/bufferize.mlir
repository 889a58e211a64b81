// RUN: opt-tool %s --bufferize | filecheck %s

// Arguments and results become memrefs. A map whose initial value is dead and
// owned writes in place; an argument is copied first; results are fresh
// buffers the caller owns, and every other buffer is freed.

// CHECK-LABEL: func.func @chain(%x: memref<8xf32>) -> memref<8xf32> {
// CHECK-NEXT:    %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK-NEXT:    df.map (%{{.*}}) in (8) outs(%{{.*}} = %[[E]] : memref<8xf32>) {
// CHECK:         }
// CHECK-NEXT:    df.map (%{{.*}}) in (8) outs(%{{.*}} = %[[E]] : memref<8xf32>) {
// CHECK:           df.write %w
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[E]] : memref<8xf32>
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = df.map (%i) in (8) outs(%o = %e : tensor<8xf32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  %b = df.map (%i) in (8) outs(%o = %a : tensor<8xf32>) {
    %v = df.read %a[%i] : tensor<8xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%u: f32):
      %s = arith.mulf %u, %u : f32
      df.yield %s : f32
    }
    df.write %w, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %b : tensor<8xf32>
}

// An argument used as an initial value is copied unless the map overwrites
// every element; a value still used later is copied.
// CHECK-LABEL: func.func @copies(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    "memref.copy"(%x, %[[C]])
// CHECK-NEXT:    df.map (%{{.*}}) in (3) outs(%{{.*}} = %[[C]] : memref<4xf32>)
// CHECK:         %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[F]] : memref<4xf32>)
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    "memref.copy"(%x, %[[R]])
// CHECK-NEXT:    func.return %[[C]], %[[F]], %[[R]]
func.func @copies(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y = df.map (%i) in (3) outs(%o = %x : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  %z = df.map (%i) in (4) outs(%o = %x : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %y, %z, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A splat constant is a filled buffer; tensor iter_args become loop-invariant
// buffers, with the yielded value written back in place; temporaries are freed.
// CHECK-LABEL: func.func @loop
// CHECK:         %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         df.write %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[S]] : memref<4xf32>)
// CHECK:             df.write %w
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[S]]
func.func @loop(%n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<1.0> : tensor<4xf32>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4xf32>) {
    %next = df.map (%i) in (4) outs(%o = %acc : tensor<4xf32>) {
      %v = df.read %acc[%i] : tensor<4xf32>
      %w = df.tasklet (%v) : (f32) -> f32 {
      ^bb0(%u: f32):
        %s = arith.addf %u, %u : f32
        df.yield %s : f32
      }
      df.write %w, %o[%i] : tensor<4xf32>
    } -> tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// A map that reads its initial value at another element than it writes gets a copy.
// CHECK-LABEL: func.func @shifted
// CHECK:         %[[E:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5xf32>
// CHECK:         %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5xf32>
// CHECK-NEXT:    "memref.copy"(%[[E]], %[[C]])
// CHECK-NEXT:    df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[C]] : memref<5xf32>)
// CHECK:         memref.dealloc %[[E]]
// CHECK-NEXT:    func.return %[[C]]
func.func @shifted(%x: tensor<5xf32>) -> tensor<5xf32> {
  %e = tensor.empty() : tensor<5xf32>
  %a = df.map (%i) in (5) outs(%o = %e : tensor<5xf32>) {
    %v = df.read %x[%i] : tensor<5xf32>
    df.write %v, %o[%i] : tensor<5xf32>
  } -> tensor<5xf32>
  %b = df.map (%i) in (4) outs(%o = %a : tensor<5xf32>) {
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %v = df.read %a[%j] : tensor<5xf32>
    df.write %v, %o[%i] : tensor<5xf32>
  } -> tensor<5xf32>
  func.return %b : tensor<5xf32>
}

// A map whose output starts empty writes into the buffer of a dead tensor it
// owns and reads only at the element each iteration writes (%s, accumulating
// into the sum), instead of a fresh buffer. Not when that tensor is read at
// another element (@shifted_read), or after the write in the body
// (@read_after_write).
// CHECK-LABEL: func.func @donor
// CHECK:         %[[S:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         df.map (%{{.*}}) in (8) outs(%{{.*}} = %[[S]] : memref<8xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         df.map (%{{.*}}) in (8) outs(%{{.*}} = %[[S]] : memref<8xf32>)
// CHECK:         func.return %[[S]]
// CHECK-LABEL: func.func @shifted_read
// CHECK:         %[[S:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         %[[R:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         df.map (%{{.*}}) in (7) outs(%{{.*}} = %[[R]] : memref<8xf32>)
// CHECK-LABEL: func.func @read_after_write
// CHECK:         %[[S:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         %[[R:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK:         df.map (%{{.*}}) in (8) outs(%{{.*}} = %[[R]] : memref<8xf32>)
func.func @donor(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %s = df.map (%i) in (8) outs(%o = %e1 : tensor<8xf32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %r = df.map (%i) in (8) outs(%o = %e2 : tensor<8xf32>) {
    %a = df.read %s[%i] : tensor<8xf32>
    %b = df.read %x[%i] : tensor<8xf32>
    %t = df.tasklet (%a, %b) : (f32, f32) -> f32 {
    ^bb0(%p: f32, %q: f32):
      %w = arith.addf %p, %q : f32
      df.yield %w : f32
    }
    df.write %t, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

func.func @shifted_read(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c1 = arith.constant 1 : index
  %e1 = tensor.empty() : tensor<8xf32>
  %s = df.map (%i) in (8) outs(%o = %e1 : tensor<8xf32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %r = df.map (%i) in (7) outs(%o = %e2 : tensor<8xf32>) {
    %i1 = arith.addi %i, %c1 : index
    %a = df.read %s[%i1] : tensor<8xf32>
    df.write %a, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

func.func @read_after_write(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %s = df.map (%i) in (8) outs(%o = %e1 : tensor<8xf32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    df.write %v, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %r = df.map (%i) in (8) outs(%o = %e2 : tensor<8xf32>) {
    %a = df.read %x[%i] : tensor<8xf32>
    df.write %a, %o[%i] : tensor<8xf32>
    %b = df.read %s[%i] : tensor<8xf32>
    df.write %b, %o[%i] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// A tensor made before a loop and used inside it is live in every iteration:
// a map inside the loop that starts from it writes into a fresh buffer holding
// its value (zeros: filled again rather than copied), never into it.
// CHECK-LABEL: func.func @live_across_iterations
// CHECK:         %[[ZERO:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK-NEXT:      %[[FRESH:.*]] = memref.alloc()
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %[[FRESH]] : memref<4xf64>) {
// CHECK-NEXT:        df.write %[[Z]], %[[O]][%[[I]]] : memref<4xf64>
// CHECK-NEXT:      }
// CHECK-NEXT:      df.map (%{{.*}}) in (1) outs(%{{.*}} = %[[FRESH]] : memref<4xf64>)
func.func @live_across_iterations(%x: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4xf64>
  %zero = df.map (%q) in (4) outs(%oz = %e : tensor<4xf64>) {
    %zz = arith.constant 0.0 : f64
    df.write %zz, %oz[%q] : tensor<4xf64>
  } -> tensor<4xf64>
  %r = scf.for %t = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<4xf64>) {
    %m = df.map (%k) in (1) outs(%o = %zero : tensor<4xf64>) {
      %v = df.read %acc[%t] : tensor<4xf64>
      df.write %v, %o[%t] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %m : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}

// Two outputs start from the same tensor: the first overwrites every element
// (no copy needed), the second accumulates into one element and must see the
// zeros, so it gets a buffer filled with them (not a fresh uninitialised one).
// CHECK-LABEL: func.func @shared_initial_value
// CHECK:         %[[ZERO:.*]] = memref.alloc()
// CHECK:         %[[SECOND:.*]] = memref.alloc()
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %[[SECOND]] : memref<4xf64>) {
// CHECK-NEXT:      df.write %[[Z]], %[[O]][%[[I]]] : memref<4xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[ZERO]] : memref<4xf64>, %{{.*}} = %[[SECOND]] : memref<4xf64>)
func.func @shared_initial_value(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %zero = arith.constant dense<0.0> : tensor<4xf64>
  %a, %b = df.map (%i) in (4) outs(%oa = %zero : tensor<4xf64>, %ob = %zero : tensor<4xf64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    %c0 = arith.constant 0 : index
    df.write %v, %oa[%i] : tensor<4xf64>
    df.write %v, %ob[%c0] wcr(add) : tensor<4xf64>
  } -> tensor<4xf64>, tensor<4xf64>
  func.return %a, %b : tensor<4xf64>, tensor<4xf64>
}

// scf.if on tensors yields buffers: one the branch made is yielded as is; a
// value from outside the branch is copied first, so the result is always owned.
// %h is read again later in the else branch, so the map there must not take
// %h's buffer (only the other branch's reads come after it in the text).
// CHECK-LABEL: func.func @branches
// CHECK:         %[[H:.*]] = memref.alloc()
// CHECK:         %{{.*}} = scf.if %c -> (memref<4xf64>) {
// CHECK-NEXT:      %[[COPY:.*]] = memref.alloc()
// CHECK-NEXT:      "memref.copy"(%[[H]], %[[COPY]])
// CHECK-NEXT:      scf.yield %[[COPY]] : memref<4xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[FRESH:.*]] = memref.alloc()
// CHECK-NEXT:      df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[FRESH]] : memref<4xf64>)
func.func @branches(%x: tensor<4xf64>, %c: i1) -> tensor<4xf64> {
  %e0 = tensor.empty() : tensor<4xf64>
  %h = df.map (%i) in (4) outs(%o = %e0 : tensor<4xf64>) {
    %v = df.read %x[%i] : tensor<4xf64>
    %w = arith.mulf %v, %v : f64
    df.write %w, %o[%i] : tensor<4xf64>
  } -> tensor<4xf64>
  %r = scf.if %c -> (tensor<4xf64>) {
    scf.yield %h : tensor<4xf64>
  } else {
    %e1 = tensor.empty() : tensor<4xf64>
    %m = df.map (%i) in (4) outs(%o = %e1 : tensor<4xf64>) {
      %v = df.read %h[%i] : tensor<4xf64>
      %w = arith.addf %v, %v : f64
      df.write %w, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    %e2 = tensor.empty() : tensor<4xf64>
    %s = df.map (%i) in (4) outs(%o = %e2 : tensor<4xf64>) {
      %a = df.read %m[%i] : tensor<4xf64>
      %b = df.read %h[%i] : tensor<4xf64>
      %w = arith.subf %a, %b : f64
      df.write %w, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %s : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}

// Two iter_args that swap places: the yield copies both aside, then back.
// CHECK-LABEL: func.func @swap
// CHECK:         %[[A:.*]] = memref.alloc()
// CHECK:         %[[B:.*]] = memref.alloc()
// CHECK:         scf.for
// CHECK-NEXT:      %[[TB:.*]] = memref.alloc()
// CHECK-NEXT:      "memref.copy"(%[[B]], %[[TB]])
// CHECK-NEXT:      %[[TA:.*]] = memref.alloc()
// CHECK-NEXT:      "memref.copy"(%[[A]], %[[TA]])
// CHECK-NEXT:      "memref.copy"(%[[TB]], %[[A]])
// CHECK-NEXT:      "memref.copy"(%[[TA]], %[[B]])
func.func @swap(%x: tensor<4xf64>, %y: tensor<4xf64>, %n: index) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a, %b = scf.for %t = %c0 to %n step %c1 iter_args(%p = %x, %q = %y) -> (tensor<4xf64>, tensor<4xf64>) {
    scf.yield %q, %p : tensor<4xf64>, tensor<4xf64>
  }
  func.return %a : tensor<4xf64>
}

// scf.while: a carried tensor lives in one buffer (a copy of the argument),
// both regions and the result read it, the after region's value is copied
// back into it; scalars stay carried.
func.func @while_loop(%x: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %r:2 = scf.while (%k = %c0, %y = %x) : (i32, tensor<4xf32>) -> (i32, tensor<4xf32>) {
    %go = arith.cmpi slt, %k, %n : i32
    scf.condition(%go) %k, %y : i32, tensor<4xf32>
  } do {
  ^bb0(%k2: i32, %y2: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %z = df.map (%i) in (4) outs(%o = %e : tensor<4xf32>) {
      %v = df.read %y2[%i] : tensor<4xf32>
      %w = df.tasklet (%v) : (f32) -> f32 {
      ^bb0(%a: f32):
        %s = math.sin %a : f32
        df.yield %s : f32
      }
      df.write %w, %o[%i] : tensor<4xf32>
    } -> tensor<4xf32>
    %c1 = arith.constant 1 : i32
    %k3 = arith.addi %k2, %c1 : i32
    scf.yield %k3, %z : i32, tensor<4xf32>
  }
  func.return %r#1 : tensor<4xf32>
}
// CHECK-LABEL: func.func @while_loop(%x: memref<4xf32>, %n: i32) -> memref<4xf32> {
// CHECK:         %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    "memref.copy"(%x, %[[BUF]])
// CHECK-NEXT:    %{{.*}} = scf.while (%k = %c0) : (i32) -> i32 {
// CHECK-NEXT:      %go = arith.cmpi slt, %k, %n : i32
// CHECK-NEXT:      scf.condition(%go) %k : i32
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb{{.*}}(%k2: i32):
// CHECK-NEXT:      df.map (%i) in (4) outs(%o = %[[BUF]] : memref<4xf32>) {
// CHECK-NEXT:        %{{.*}} = df.read %[[BUF]][%i] : memref<4xf32>
// CHECK:           %k3 = arith.addi %k2, %c1 : i32
// CHECK-NEXT:      scf.yield %k3 : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[BUF]] : memref<4xf32>

// A splat constant or a map filling one value, used as the initial value of two
// maps: the first gets a fresh buffer filled again, not a copy (a fill writes the
// bytes a copy reads and writes; `contraction-to-blas` then drops a zero fill
// before a product), the second the dead original.
// CHECK-LABEL: func.func @refilled(%x: memref<4xf32>, %s: f32) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) {
// CHECK-NEXT:    %[[Z:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %[[Z]] : memref<4xf32>) {
// CHECK-NEXT:      df.write %[[ZERO]], %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Z2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %[[Z2]] : memref<4xf32>) {
// CHECK-NEXT:      df.write %[[ZERO2]], %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[Z2]] : memref<4xf32>) {
// CHECK:         df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[Z]] : memref<4xf32>) {
// CHECK:         %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[F]] : memref<4xf32>) {
// CHECK-NEXT:      df.write %s, %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[F2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:    df.map (%[[I:.*]]) in (4) outs(%[[O:.*]] = %[[F2]] : memref<4xf32>) {
// CHECK-NEXT:      df.write %s, %[[O]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[F2]] : memref<4xf32>) {
// CHECK:         df.map (%{{.*}}) in (4) outs(%{{.*}} = %[[F]] : memref<4xf32>) {
// CHECK-NOT:     memref.copy
// CHECK:         func.return %[[Z2]], %[[Z]], %[[F2]], %[[F]]
func.func @refilled(%x: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %a = df.map (%i) in (4) outs(%o = %z : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] wcr(add) : tensor<4xf32>
  } -> tensor<4xf32>
  %b = df.map (%i) in (4) outs(%o = %z : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] wcr(max) : tensor<4xf32>
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %f = df.map (%i) in (4) outs(%o = %e : tensor<4xf32>) {
    df.write %s, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  %c = df.map (%i) in (4) outs(%o = %f : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] wcr(add) : tensor<4xf32>
  } -> tensor<4xf32>
  %d = df.map (%i) in (4) outs(%o = %f : tensor<4xf32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    df.write %v, %o[%i] wcr(max) : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %a, %b, %c, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
