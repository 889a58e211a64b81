// RUN: opt-tool %s --buffer-results-to-out-params | filecheck %s

// A returned allocation becomes the new trailing argument: the function
// computes straight into the caller's buffer. The scalar result stays.
// CHECK-LABEL: func.func @fresh
// CHECK-SAME:    (%x: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>) -> f32
// CHECK-NOT:     memref.alloc
// CHECK:         memref.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<4xf32>
// CHECK:         func.return %{{.*}} : f32
func.func @fresh(%x: memref<4xf32>) -> (memref<4xf32>, f32) {
  %r = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %r[%c0] : memref<4xf32>
  func.return %r, %v : memref<4xf32>, f32
}

// A returned argument (or anything not allocated here) is copied out.
// CHECK-LABEL: func.func @passthrough
// CHECK-SAME:    (%x: memref<4xf32>, %[[O1:.*]]: memref<4xf32>, %[[O2:.*]]: memref<4xf32>) {
// CHECK:         "memref.copy"(%x, %[[O1]])
// CHECK:         "memref.copy"(%x, %[[O2]])
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return{{$}}
func.func @passthrough(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  func.return %x, %x : memref<4xf32>, memref<4xf32>
}

// The same allocation returned twice is copied into both out buffers, then freed.
// CHECK-LABEL: func.func @twice
// CHECK:         %[[R:.*]] = memref.alloc
// CHECK-COUNT-2: "memref.copy"(%[[R]]
// CHECK-NEXT:    memref.dealloc %[[R]]
func.func @twice() -> (memref<2xf64>, memref<2xf64>) {
  %r = memref.alloc() : memref<2xf64>
  func.return %r, %r : memref<2xf64>, memref<2xf64>
}

// A dynamic-shape result stays a result; a function that is called keeps
// its signature (its callers would break).
// CHECK-LABEL: func.func @dynamic(%n: index) -> memref<?xf32>
// CHECK-LABEL: func.func @callee() -> memref<3xf32>
// CHECK-LABEL: func.func @caller
// CHECK-SAME:    (%{{.*}}: memref<3xf32>)
// CHECK:         %[[R:.*]] = func.call @callee() : () -> memref<3xf32>
// CHECK:         "memref.copy"(%[[R]], %{{.*}})
func.func @dynamic(%n: index) -> memref<?xf32> {
  %r = memref.alloc(%n) : memref<?xf32>
  func.return %r : memref<?xf32>
}
func.func @callee() -> memref<3xf32> {
  %r = memref.alloc() : memref<3xf32>
  func.return %r : memref<3xf32>
}
func.func @caller() -> memref<3xf32> {
  %r = func.call @callee() : () -> memref<3xf32>
  func.return %r : memref<3xf32>
}
