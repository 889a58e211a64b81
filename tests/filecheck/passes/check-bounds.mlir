// RUN: opt-tool %s --check-bounds | filecheck %s
// RUN: opt-tool %s '--check-bounds{print-stats=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// A gather reads at indices taken from data: that read is checked at run
// time; the reads and the write over the map's own range are proven.
// CHECK-LABEL: func.func @gather
// CHECK:         df.read %idx[%{{.*}}] : memref<4xi64>
// CHECK:         df.read %x[%{{.*}}] {check_bounds = "df.read"} : memref<8xf64>
// CHECK-NEXT:    df.write %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf64>
// STATS: check-bounds: @gather checked=1 proven=2
func.func @gather(%x: memref<8xf64>, %idx: memref<4xi64>) -> memref<4xf64> {
  %out = memref.alloc() {alignment = 64 : i64} : memref<4xf64>
  df.map (%i) in (4) outs(%o = %out : memref<4xf64>) {
    %k = df.read %idx[%i] : memref<4xi64>
    %j = arith.index_cast %k : i64 to index
    %v = df.read %x[%j] : memref<8xf64>
    df.write %v, %o[%i] : memref<4xf64>
  }
  func.return %out : memref<4xf64>
}

// Dynamic sizes: the read of %b over its own size is proven; the write into a
// buffer sized by %a over %b's size is not.
// CHECK-LABEL: func.func @sizes_that_must_agree
// CHECK:         df.read %b[%{{.*}}] : memref<?xf64>
// CHECK-NEXT:    df.write %{{.*}}, %{{.*}}[%{{.*}}] {check_bounds = "df.write"} : memref<?xf64>
// STATS: check-bounds: @sizes_that_must_agree checked=1 proven=1
func.func @sizes_that_must_agree(%a: memref<?xf64>, %b: memref<?xf64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %na = memref.dim %a, %c0 : memref<?xf64>
  %nb = memref.dim %b, %c0 : memref<?xf64>
  %out = memref.alloc(%na) {alignment = 64 : i64} : memref<?xf64>
  df.map (%i) in (%nb) outs(%o = %out : memref<?xf64>) {
    %v = df.read %b[%i] : memref<?xf64>
    df.write %v, %o[%i] : memref<?xf64>
  }
  func.return %out : memref<?xf64>
}

// Stencil offsets inside the range and a reversed loop variable are proven.
// CHECK-LABEL: func.func @proven
// CHECK-NOT:     check_bounds
// CHECK:         func.return
// STATS: check-bounds: @proven checked=0 proven=4
func.func @proven(%x: memref<8xf64>) -> memref<8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %out = memref.alloc() {alignment = 64 : i64} : memref<8xf64>
  scf.for %t = %c0 to %c7 step %c1 {
    %back = arith.subi %c7, %t : index
    df.map (%i) in (6) outs(%o = %out : memref<8xf64>) {
      %ip = arith.addi %i, %c2 : index
      %a = df.read %x[%ip] : memref<8xf64>
      %b = df.read %x[%back] : memref<8xf64>
      %s = arith.addf %a, %b : f64
      %j = arith.addi %i, %c1 : index
      df.write %s, %o[%j] : memref<8xf64>
    }
    %v = memref.load %x[%t] : memref<8xf64>
  }
  func.return %out : memref<8xf64>
}
