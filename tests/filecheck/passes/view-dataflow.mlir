// view-dataflow writes a Graphviz graph of maps (clusters), tasklets (boxes)
// and memlets (labelled edges), and leaves the IR unchanged.
// RUN: opt-tool %s --view-dataflow 2>&1 >/dev/null | filecheck %s
// RUN: opt-tool %s --view-dataflow | filecheck %s --check-prefix=IR
// RUN: opt-tool %s '--view-dataflow{func=other output="%t.dot"}' && filecheck %s --check-prefix=ONE < %t.dot
// RUN: not opt-tool %s '--view-dataflow{func=nope}' 2>&1 | filecheck %s --check-prefix=NOPE

// CHECK:      digraph dataflow {
// CHECK:      subgraph cluster_{{[0-9]+}} {
// CHECK-NEXT: label="@row_sum";
// CHECK-NEXT: [[X:n[0-9]+]] [label="%x: tensor<4x8xf32>", shape=ellipse, style=bold];
// CHECK:      [[ZEROS:n[0-9]+]] [label="arith.constant"
// CHECK:      [[S:n[0-9]+]] [label="%s: tensor<4xf32>", shape=ellipse];
// CHECK:      label="df.map (i, j) in (4, 7)";
// CHECK-NEXT: [[T:n[0-9]+]] [label="tasklet\nmulf", shape=box];
// CHECK-NEXT: }
// CHECK-NEXT: [[RET:n[0-9]+]] [label="return"
// CHECK:      label="@other";
// Edges come after every cluster, so that none pulls a node into a cluster.
// CHECK:      [[ZEROS]] -> [[S]] [style=dashed];
// CHECK-NEXT: [[X]] -> [[T]] [label="x[i, j+1]"];
// CHECK-NEXT: [[T]] -> [[S]] [label="[i] wcr(add)"];
// CHECK-NEXT: [[S]] -> [[RET]];

// IR: df.map
// IR: func.func @other

// ONE-NOT: @row_sum
// ONE:     label="@other";

// NOPE: error: view-dataflow: no function @nope

func.func @row_sum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zeros = arith.constant dense<0.0> : tensor<4xf32>
  %s = df.map (%i, %j) in (4, 7) outs(%o = %zeros : tensor<4xf32>) {
    %one = arith.constant 1 : index
    %j1 = arith.addi %j, %one : index
    %v = df.read %x[%i, %j1] : tensor<4x8xf32>
    %w = df.tasklet (%v) : (f32) -> f32 {
    ^bb0(%a: f32):
      %sq = arith.mulf %a, %a : f32
      df.yield %sq : f32
    }
    df.write %w, %o[%i] wcr(add) : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

func.func @other(%y: tensor<2xf32>) -> tensor<2xf32> {
  %z = nn.exp %y : (tensor<2xf32>) -> tensor<2xf32>
  func.return %z : tensor<2xf32>
}
