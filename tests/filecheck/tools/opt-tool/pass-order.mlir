// Pass flags run in command-line order, interleaved with -p pipelines, and
// print the IR after each pass (or the named ones) on stderr with MLIR's headers.
// RUN: opt-tool %s --expand-library --canonicalize --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: opt-tool %s -p expand-library --cse --print-ir-after=cse 2>&1 >/dev/null | filecheck %s --check-prefix=ONE
// RUN: opt-tool %s --pass-pipeline='builtin.module(expand-library,dce)' | filecheck %s --check-prefix=ANCHOR
// RUN: opt-tool %s --time-passes -p expand-library,cse 2>&1 >/dev/null | filecheck %s --check-prefix=TIME

// ALL:      // -----// IR Dump After ExpandLibraryPass (expand-library) //----- //
// ALL:      df.map
// ALL:      // -----// IR Dump After CanonicalizePass (canonicalize) //----- //

// ONE-NOT:  IR Dump After ExpandLibraryPass
// ONE:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// ONE-NEXT: builtin.module

// ANCHOR-NOT: nn.exp
// ANCHOR:     math.exp

// TIME:      ... Execution time report ...
// TIME:      Total Execution Time:
// TIME:      ----Wall Time----  ----Name----
// TIME-NEXT: load passes
// TIME-NEXT: parse
// TIME-NEXT: expand-library
// TIME-NEXT: cse
// TIME-NEXT: print
// TIME-NEXT: Total
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
