// RUN: opt-tool %s '--lower-dataflow{target=gpu}' | filecheck %s
// RUN: opt-tool %s -p 'lower-dataflow{target=gpu}' | filecheck %s

// Each top-level map becomes a kernel of gpu.module @dfc_kernels and a launch of
// ceil(iterations / block) blocks on the host; host memrefs are device memory.
// CHECK:       builtin.module attributes {gpu.container_module} {

// 1000 iterations: 4 blocks of 256 threads.
// CHECK-LABEL: func.func @scale(%x: memref<1000xf32>, %y: memref<1000xf32>) {
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[GRID:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK:         "gpu.launch_func"(%[[GRID]], %[[ONE]], %[[ONE]], %[[BLOCK]], %[[ONE]], %[[ONE]], %y, %x) <{kernel = @dfc_kernels::@scale_k0
// CHECK-NEXT:    func.return
func.func @scale(%x: memref<1000xf32>, %y: memref<1000xf32>) {
  df.map (%i) in (1000) outs(%o = %y : memref<1000xf32>) {
    %v = df.read %x[%i] : memref<1000xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %k = arith.constant 3.0 : f32
      %m = arith.mulf %a, %k : f32
      df.yield %m : f32
    }
    df.write %w, %o[%i] : memref<1000xf32>
  }
  func.return
}

// A dynamic iteration count: the grid is computed on the host, the size is passed.
// CHECK-LABEL: func.func @col_max(%x: memref<?x64xf64>, %m: memref<64xf64>) {
// CHECK:         %[[N:.*]] = memref.dim %x, %{{.*}} : memref<?x64xf64>
// CHECK:         %[[TOTAL:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK:         %[[PADDED:.*]] = arith.addi %[[TOTAL]], %{{.*}} : index
// CHECK:         %[[GRID:.*]] = arith.divui %[[PADDED]], %{{.*}} : index
// CHECK:         "gpu.launch_func"(%[[GRID]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %m, %[[N]], %x) <{kernel = @dfc_kernels::@col_max_k0
func.func @col_max(%x: memref<?x64xf64>, %m: memref<64xf64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf64>
  df.map (%i, %j) in (%n, 64) outs(%o = %m : memref<64xf64>) {
    %v = df.read %x[%i, %j] : memref<?x64xf64>
    df.write %v, %o[%j] wcr(max) : memref<64xf64>
  }
  func.return
}

// Host allocation, copy and deallocation become their gpu counterparts; 8 iterations
// make one block of 32 threads.
// CHECK-LABEL: func.func @dots(%x: memref<8x16xf32>, %y: memref<8x16xf32>) -> memref<8xf32> {
// CHECK:         %[[T:.*]] = "gpu.alloc"() {{.*}} : () -> memref<8x16xf32>
// CHECK-NEXT:    "gpu.memcpy"(%[[T]], %x) {{.*}} : (memref<8x16xf32>, memref<8x16xf32>) -> ()
// CHECK-NEXT:    %[[S:.*]] = "gpu.alloc"() {{.*}} : () -> memref<8xf32>
// CHECK:         %[[BLOCK:.*]] = arith.constant 32 : index
// CHECK-NEXT:    "gpu.launch_func"(%{{.*}}, %{{.*}}, %{{.*}}, %[[BLOCK]], %{{.*}}, %{{.*}}, %[[S]], %[[T]], %y) <{kernel = @dfc_kernels::@dots_k0
// CHECK-NEXT:    "gpu.dealloc"(%[[T]])
// CHECK-NEXT:    func.return %[[S]] : memref<8xf32>
// CHECK-NOT:     memref.alloc
func.func @dots(%x: memref<8x16xf32>, %y: memref<8x16xf32>) -> memref<8xf32> {
  %t = memref.alloc() : memref<8x16xf32>
  "memref.copy"(%x, %t) : (memref<8x16xf32>, memref<8x16xf32>) -> ()
  %s = memref.alloc() : memref<8xf32>
  df.map (%i) in (8) outs(%o = %s : memref<8xf32>) {
    df.map (%j) in (16) {
      %a = df.read %t[%i, %j] : memref<8x16xf32>
      %b = df.read %y[%i, %j] : memref<8x16xf32>
      %p = df.tasklet (%a, %b) : (f32, f32) -> f32 {
      ^bb0(%u: f32, %v: f32):
        %q = arith.mulf %u, %v : f32
        df.yield %q : f32
      }
      df.write %p, %o[%i] wcr(add) : memref<8xf32>
    }
  }
  "memref.dealloc"(%t) : (memref<8x16xf32>) -> ()
  func.return %s : memref<8xf32>
}

// A blas.gemm launches a tiled kernel (passes/gpu_gemm.py) of 256 threads for each
// 64 x 64 tile of C: ceil(n / 64) * ceil(m / 64) * batch blocks.
// CHECK-LABEL: func.func @gemm(%a: memref<3x100x40xf32>, %b: memref<90x40xf32>, %c: memref<3x100x90xf32>) {
// CHECK:         %[[NT:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK:         %[[MT:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[TILES:.*]] = arith.muli %[[NT]], %[[MT]] : index
// CHECK-NEXT:    %[[GRID:.*]] = arith.muli %[[TILES]], %batch : index
// CHECK:         %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT:    "gpu.launch_func"(%[[GRID]], %{{.*}}, %{{.*}}, %[[BLOCK]], %{{.*}}, %{{.*}}, %a, %b, %c) <{kernel = @dfc_kernels::@gemm_k0
// CHECK-NOT:     blas.gemm
func.func @gemm(%a: memref<3x100x40xf32>, %b: memref<90x40xf32>, %c: memref<3x100x90xf32>) {
  %batch = arith.constant 3 : index
  %m = arith.constant 100 : index
  %n = arith.constant 90 : index
  %k = arith.constant 40 : index
  %sa = arith.constant 4000 : index
  %zero = arith.constant 0 : index
  %sc = arith.constant 9000 : index
  blas.gemm %a, %b, %c, %batch, %m, %n, %k, %k, %k, %n, %sa, %zero, %sc {beta = 1.0 : f64, transpose_b} : memref<3x100x40xf32>, memref<90x40xf32>, memref<3x100x90xf32>
  func.return
}

// A row reduction (passes/gpu_rows.py): one block of 256 threads per row.
// CHECK-LABEL: func.func @row_sum(%x: memref<4x1000xf32>, %s: memref<4xf32>) {
// CHECK:         %[[ROWS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[GRID:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK:         %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT:    "gpu.launch_func"(%[[GRID]], %{{.*}}, %{{.*}}, %[[BLOCK]], %{{.*}}, %{{.*}}, %s, %x) <{kernel = @dfc_kernels::@row_sum_k0
func.func @row_sum(%x: memref<4x1000xf32>, %s: memref<4xf32>) {
  df.map (%i, %j) in (4, 1000) outs(%o = %s : memref<4xf32>) {
    %v = df.read %x[%i, %j] : memref<4x1000xf32>
    df.write %v, %o[%i] wcr(add) : memref<4xf32>
  }
  func.return
}

// The kernels: thread t = block_id * block_dim + thread_id runs iteration t under
// `t < iterations`; outputs come first; read-only, unaliased inputs are marked.
// CHECK:       "gpu.module"() <{sym_name = "dfc_kernels"}> ({
// CHECK-NEXT:    "gpu.func"() <{function_type = (memref<1000xf32>, memref<1000xf32>) -> (), kernel}> ({
// CHECK-NEXT:    ^bb0(%[[OUT:.*]]: memref<1000xf32>, %[[IN:.*]]: memref<1000xf32>):
// CHECK-NEXT:      %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[BID:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[BDIM:.*]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT:      %[[T:.*]] = arith.addi %[[B]], %[[TID]] : index
// CHECK:           arith.constant 1000 : index
// CHECK:           %[[IN_RANGE:.*]] = arith.cmpi ult, %[[T]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[IN_RANGE]] {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[IN]][%[[T]]] : memref<1000xf32>
// CHECK-NEXT:        %[[K:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[V]], %[[K]] : f32
// CHECK-NEXT:        memref.store %[[M]], %[[OUT]][%[[T]]] : memref<1000xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      "gpu.return"() : () -> ()
// CHECK-NEXT:    }) {sym_name = "scale_k0", gpu.known_block_size = array<i32: 256, 1, 1>, arg_attrs = [{llvm.noalias}, {llvm.noalias, llvm.readonly}]} : () -> ()

// The map variables are recovered row-major; the wcr(max) into a column is an atomic maximumf (kind 3).
// CHECK:         ^bb0(%[[M:.*]]: memref<64xf64>, %[[N:.*]]: index, %[[X:.*]]: memref<?x64xf64>):
// CHECK:           %[[T:.*]] = arith.addi
// CHECK:           %[[TOTAL:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK-NEXT:      %[[IN_RANGE:.*]] = arith.cmpi ult, %[[T]], %[[TOTAL]] : index
// CHECK-NEXT:      scf.if %[[IN_RANGE]] {
// CHECK-NEXT:        %[[J:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK-NEXT:        %[[I:.*]] = arith.divui %[[T]], %{{.*}} : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<?x64xf64>
// CHECK-NEXT:        %{{.*}} = "memref.atomic_rmw"(%[[V]], %[[M]], %[[J]]) <{kind = 3 : i64}> : (f64, memref<64xf64>, index) -> f64
// CHECK:         sym_name = "col_max_k0", gpu.known_block_size = array<i32: 256, 1, 1>, arg_attrs = [{llvm.noalias}, {}, {llvm.noalias, llvm.readonly}]

// A nested map is a loop in the thread; its wcr(add) an atomic addf (kind 0).
// CHECK:         ^bb0(%[[S:.*]]: memref<8xf32>, %[[A:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<8x16xf32>):
// CHECK:           scf.if %{{.*}} {
// CHECK:             scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          %[[U:.*]] = memref.load %[[A]][%[[T:.*]], %[[J]]] : memref<8x16xf32>
// CHECK-NEXT:          %[[W:.*]] = memref.load %[[B]][%[[T]], %[[J]]] : memref<8x16xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[U]], %[[W]] : f32
// CHECK-NEXT:          %{{.*}} = "memref.atomic_rmw"(%[[P]], %[[S]], %[[T]]) <{kind = 0 : i64}> : (f32, memref<8xf32>, index) -> f32
// CHECK:         sym_name = "dots_k0", gpu.known_block_size = array<i32: 32, 1, 1>
// The gemm kernel: two shared tiles (memory space 3, 16 deep, rows of 64 + 1); a loop
// over the depth in steps of 16 carrying the thread's 4 x 4 elements of C; in a step,
// the tiles' copy, a barrier, 16 x 16 fmas out of the tiles, a barrier.
// CHECK:         "memref.global"() <{sym_name = "gemm_k0_a", type = memref<16x65xf32, 3 : i64>, initial_value
// CHECK-NEXT:    "memref.global"() <{sym_name = "gemm_k0_b", type = memref<16x65xf32, 3 : i64>, initial_value
// CHECK:         ^bb0(%[[A:.*]]: memref<3x100x40xf32>, %[[B:.*]]: memref<90x40xf32>, %[[C:.*]]: memref<3x100x90xf32>):
// CHECK:           %[[AT:.*]] = memref.get_global @gemm_k0_a : memref<16x65xf32, 3 : i64>
// CHECK:           %[[A1:.*]] = memref.collapse_shape %[[A]] {{\[}}[0 : i64, 1 : i64, 2 : i64]] : memref<3x100x40xf32> into memref<12000xf32>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %k step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK:             memref.load %[[A1]]
// CHECK:             memref.store %{{.*}}, %[[AT]]
// CHECK:             "gpu.barrier"() : () -> ()
// CHECK-COUNT-256:   math.fma
// CHECK:             "gpu.barrier"() : () -> ()
// CHECK-NEXT:        scf.yield
// CHECK:         sym_name = "gemm_k0", gpu.known_block_size = array<i32: 256, 1, 1>, arg_attrs = [{llvm.noalias, llvm.readonly}, {llvm.noalias, llvm.readonly}, {llvm.noalias}]
// The row kernel: the block's row from block_id; thread t sums the positions t, t + 256,
// ... of it (four per iteration, those past the end not added) in a register; the
// registers go to a shared array, halved 7 times with a barrier after each, and
// thread 0 adds the last two into the output (its row is no other block's).
// CHECK:         "memref.global"() <{sym_name = "row_sum_k0_row0", type = memref<256xf32, 3 : i64>, initial_value
// CHECK:         ^bb0(%[[S:.*]]: memref<4xf32>, %[[X:.*]]: memref<4x1000xf32>):
// CHECK-NEXT:      %[[TID:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK:           %[[BID:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[BID]], %{{.*}} : index
// CHECK:           %[[SUM:.*]] = scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[P]]] : memref<4x1000xf32>
// CHECK-NEXT:        %{{.*}} = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-COUNT-3:     arith.select %{{.*}} : f32
// CHECK:           %[[SH:.*]] = memref.get_global @row_sum_k0_row0 : memref<256xf32, 3 : i64>
// CHECK-NEXT:      memref.store %[[SUM]], %[[SH]][%[[TID]]] : memref<256xf32, 3 : i64>
// CHECK-NEXT:      "gpu.barrier"() : () -> ()
// CHECK-COUNT-7:   "gpu.barrier"() : () -> ()
// CHECK:           scf.if %{{.*}} {
// CHECK:             %[[OLD:.*]] = memref.load %[[S]][%[[ROW]]] : memref<4xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[S]][%[[ROW]]] : memref<4xf32>
// CHECK-NEXT:      }
// CHECK:         sym_name = "row_sum_k0", gpu.known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT:     memref.atomic_rmw
// CHECK-NOT:     df.
