// --print-ir-after-change dumps only after passes that changed the IR; -O2
// (like -p default) runs the default pipeline down to the engine's IR; -O0 runs nothing.
// RUN: opt-tool %s --cse --expand-library --dce --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: opt-tool %s -O2 | filecheck %s --check-prefix=O2
// RUN: opt-tool %s -p default | filecheck %s --check-prefix=O2
// RUN: opt-tool %s -O0 | filecheck %s --check-prefix=O0
// RUN: opt-tool --list-passes | filecheck %s --check-prefix=LIST

// CHANGE-NOT: IR Dump After CommonSubexpressionElimination
// CHANGE:     // -----// IR Dump After ExpandLibraryPass (expand-library) //----- //
// CHANGE-NOT: IR Dump After DeadCodeElimination

// O2:     func.func @f(%x: memref<4xf32>) -> memref<4xf32>
// O2:     memref.alloc
// O2:     scf.for
// O2:     math.exp
// O2-NOT: nn.exp

// O0: nn.exp %x

// LIST:      project passes
// LIST-NEXT:   --autodiff  {{ *}}reverse-mode gradients of tensor functions.
// LIST:        --fuse  {{ *}}producer-consumer and sibling map fusion, and tasklet merging.
// LIST:      named pipelines:
// LIST-NEXT: default = expand-library,canonicalize,cse,scatter-to-gather,fuse
// LIST:      xDSL passes
// LIST-NEXT: apply-eqsat-pdl,
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
