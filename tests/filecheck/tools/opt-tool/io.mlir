// Input from stdin, output to -o, generic printing, split files.
// RUN: opt-tool < %s | filecheck %s
// RUN: opt-tool %s -o %t && filecheck %s < %t
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: opt-tool %s --split-input-file | filecheck %s --check-prefix=SPLIT

// CHECK:       func.func @first
// CHECK:       func.func @second
// GENERIC:     "func.func"() <{sym_name = "first"
// GENERIC:     "nn.neg"(%{{.*}}) : (tensor<2xf32>) -> tensor<2xf32>
// SPLIT:       func.func @first
// SPLIT-NEXT:  nn.neg
// SPLIT:       // -----
// SPLIT-NEXT:  builtin.module
// SPLIT-NEXT:  func.func @second
func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.neg %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @second() {
  func.return
}
