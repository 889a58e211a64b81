// The NVPTX backend: each top-level map is a kernel entry with its block size as
// .reqntid; the ragged last block is guarded; read-only inputs load through the
// non-coherent cache; a wcr(add) is a warp-aggregated atomic.
// RUN: opt-tool %s -t ptx | filecheck %s
// The lowered IR reads back: lowering and PTX emission split across two runs agree.
// RUN: opt-tool %s -p 'expand-library,canonicalize,cse,bufferize,lower-dataflow{target=gpu},canonicalize,cse' \
// RUN:   | opt-tool -t ptx | filecheck %s

// CHECK:       .target sm_90

// 1000 elements in blocks of 256: threads 1000..1023 skip the body.
// CHECK-LABEL: .visible .entry scale_k0(
// CHECK-NEXT:    .param .u64 .ptr .global .align 1 scale_k0_param_0,
// CHECK-NEXT:    .param .u64 .ptr .global .align 1 scale_k0_param_1
// CHECK-NEXT:  )
// CHECK-NEXT:  .reqntid 256, 1, 1
// CHECK:         mov.u32 %r{{[0-9]+}}, %tid.x;
// CHECK:         mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK:         setp.gt.u64 %p[[P:[0-9]+]], %rd{{[0-9]+}}, 999;
// CHECK-NEXT:    @%p[[P]] bra $L__BB0_[[DONE:[0-9]+]];
// CHECK:         ld.global.nc.b32
// CHECK:         mul.f32
// CHECK:         st.global.b32
// CHECK:       $L__BB0_[[DONE]]:
// CHECK-NEXT:    ret;
func.func @scale(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %e = tensor.empty() : tensor<1000xf32>
  %r = df.map (%i) in (1000) outs(%o = %e : tensor<1000xf32>) {
    %v = df.read %x[%i] : tensor<1000xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %k = arith.constant 3.0 : f32
      %m = arith.mulf %a, %k : f32
      df.yield %m : f32
    }
    df.write %w, %o[%i] : tensor<1000xf32>
  } -> tensor<1000xf32>
  func.return %r : tensor<1000xf32>
}

// The zero-filled output is a one-element kernel (one warp). The sum is a row
// reduction (passes/gpu_rows.py): 2 blocks of 256 threads, 4 loads per loop
// iteration, a tree in shared memory, then one atomic add per block (full warps
// whose lanes all hit one address reduce with shuffles, then one lane adds).
// CHECK-LABEL: .visible .entry total_k0(
// CHECK:       .reqntid 32, 1, 1
// CHECK:         st.global.b32 [%rd{{[0-9]+}}], 0;
// CHECK-LABEL: .visible .entry total_k1(
// CHECK:       .reqntid 256, 1, 1
// CHECK:         .shared .align 16 .b8 total_k1_row0[1024];
// CHECK-COUNT-4: ld.global.nc.b32
// CHECK:         st.shared.b32
// CHECK-NEXT:    bar.sync 0;
// CHECK:         activemask.b32
// CHECK:         match.any.sync.b64
// CHECK:         atom.global.add.f32
// CHECK:         shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 16, 31, -1;
// CHECK:         add.rn.f32
// CHECK:         %laneid;
func.func @total(%x: tensor<4096xf32>) -> tensor<f32> {
  %z = arith.constant dense<0.0> : tensor<f32>
  %r = df.map (%i) in (4096) outs(%o = %z : tensor<f32>) {
    %v = df.read %x[%i] : tensor<4096xf32>
    df.write %v, %o[] wcr(add) : tensor<f32>
  } -> tensor<f32>
  func.return %r : tensor<f32>
}

// A dynamic size is a parameter after the pointer; wcr(max) on f64 into a column
// is a loop of compare-and-swap (no native f64 max atomic).
// CHECK-LABEL: .visible .entry col_max_k1(
// CHECK-NEXT:    .param .u64 .ptr .global .align 1 col_max_k1_param_0,
// CHECK-NEXT:    .param .u64 col_max_k1_param_1,
// CHECK:       .reqntid 256, 1, 1
// CHECK:         setp.{{.*}}.u64
// CHECK:         ld.global.nc.b64
// CHECK:         atom.{{.*}}cas.b64
func.func @col_max(%x: tensor<?x64xf64>) -> tensor<64xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf64>
  %e = tensor.empty() : tensor<64xf64>
  %init = df.map (%j) in (64) outs(%o = %e : tensor<64xf64>) {
    %ninf = arith.constant 0xFFF0000000000000 : f64
    df.write %ninf, %o[%j] : tensor<64xf64>
  } -> tensor<64xf64>
  %r = df.map (%i, %j) in (%n, 64) outs(%o = %init : tensor<64xf64>) {
    %v = df.read %x[%i, %j] : tensor<?x64xf64>
    df.write %v, %o[%j] wcr(max) : tensor<64xf64>
  } -> tensor<64xf64>
  func.return %r : tensor<64xf64>
}
