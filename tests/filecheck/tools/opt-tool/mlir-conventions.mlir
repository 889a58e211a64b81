// mlir-opt's conventions: nested (anchored) pipelines, --mlir-* spellings,
// dumps before passes and after a failing one, locations, statistics.
// RUN: opt-tool %s -p 'builtin.module(func.func(cse,canonicalize),expand-library)' --dump-pass-pipeline 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: opt-tool %s --mlir-print-ir-before=cse --cse --expand-library 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// RUN: opt-tool %s --mlir-print-ir-before-all --mlir-print-ir-after-all --cse --dce 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: not opt-tool %s --expand-library '--autodiff{func=f wrt=5}' --mlir-print-ir-after-failure 2>&1 | filecheck %s --check-prefix=FAILURE
// RUN: opt-tool %s --expand-library --mlir-print-debuginfo | filecheck %s --check-prefix=DEBUGINFO
// RUN: opt-tool %s --expand-library --mlir-pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: opt-tool %s --mlir-timing -p cse 2>&1 >/dev/null | filecheck %s --check-prefix=TIMING
// RUN: opt-tool --version | filecheck %s --check-prefix=VERSION
// RUN: opt-tool --show-dialects | filecheck %s --check-prefix=DIALECTS
// RUN: opt-tool %S/inputs/unregistered.mlir --allow-unregistered-dialect --cse | filecheck %s --check-prefix=UNREGISTERED
// RUN: not opt-tool %S/inputs/unregistered.mlir 2>&1 | filecheck %s --check-prefix=REGISTERED

// NESTED:      Pass Manager with 3 passes:
// NESTED-NEXT: builtin.module(func.func(cse,canonicalize),expand-library)
// NESTED:      func.func @f
// NESTED-COUNT-1: math.exp
// NESTED-NOT:  math.exp

// BEFORE:      // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// BEFORE-NEXT: builtin.module
// BEFORE-NOT:  IR Dump

// ALL:      IR Dump Before CommonSubexpressionElimination (cse)
// ALL:      IR Dump After CommonSubexpressionElimination (cse)
// ALL:      IR Dump Before DeadCodeElimination (dce)
// ALL:      IR Dump After DeadCodeElimination (dce)

// FAILURE:      // -----// IR Dump After AutodiffPass Failed (autodiff) //----- //
// FAILURE-NEXT: builtin.module
// FAILURE:      df.map
// FAILURE:      error: autodiff: @f has no argument #5

// The ops expand-library creates carry the location of the nn op they replace.
// DEBUGINFO:      %[[ONE:.*]] = df.map
// DEBUGINFO:      math.exp {{.*}} loc("{{.*}}mlir-conventions.mlir":59:8)
// DEBUGINFO:      } -> tensor<4xf32> loc("{{.*}}mlir-conventions.mlir":59:8)
// DEBUGINFO:      df.map
// DEBUGINFO:      } -> tensor<4xf32> loc("{{.*}}mlir-conventions.mlir":60:8)
// DEBUGINFO:      func.return {{.*}} loc("{{.*}}mlir-conventions.mlir":62:3)

// STATS:      ... Pass statistics report ...
// STATS:      expand-library
// STATS-NEXT:   (S) {{ *}}5 ops-before - operations in the module before the pass
// STATS-NEXT:   (S) {{ *[0-9]+}} ops-after

// TIMING: ... Execution time report ...
// TIMING: cse

// VERSION: dfc {{[0-9.]+}} (xDSL 0.74{{.*}}, llvmlite {{.*}})

// DIALECTS: Available Dialects: {{.*}}df, {{.*}}nn,

// UNREGISTERED: "foo.bar"() : () -> ()
// REGISTERED:   unregistered.mlir:2:3: error: unregistered operation 'foo.bar' (dialect 'foo' is not loaded; --allow-unregistered-dialect accepts it)

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = nn.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

