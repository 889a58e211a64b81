// Every error is one precise line and exit status 1, never a traceback.
// RUN: not opt-tool %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not opt-tool %s '--cse{foo=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not opt-tool %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=PIPELINE
// RUN: not opt-tool %S/inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not opt-tool %S/inputs/syntax-error.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not opt-tool %S/inputs/verify-error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not opt-tool %S/inputs/unclosed-region.mlir 2>&1 | filecheck %s --check-prefix=UNCLOSED
// RUN: not opt-tool %S/inputs/undefined-value.mlir 2>&1 | filecheck %s --check-prefix=UNDEFINED
// RUN: not opt-tool %s -p 'builtin.module(func.func(cse),fsue)' 2>&1 | filecheck %s --check-prefix=SUGGEST
// RUN: not opt-tool %s --print-ir-afer-all 2>&1 | filecheck %s --check-prefix=FLAG

// UNKNOWN:  error: unknown pass 'no-such-pass'
// OPTION:   error: bad options for pass 'cse': Provided arguments ["foo"] not found
// PIPELINE:      error: bad pass pipeline: '{' is not closed
// PIPELINE-NEXT: {{^}}  cse{{[{]$}}
// PIPELINE-NEXT: {{^}}     ^{{$}}
// MISSING:  error: cannot open input file '{{.*}}does-not-exist.mlir'
// SYNTAX:   syntax-error.mlir:3:23: error: ']' expected
// SYNTAX-NOT: Traceback
// VERIFY:   verify-error.mlir:2:8: error: 'nn.add' op shapes [3] and [4] do not broadcast
// VERIFY-NOT: Traceback
// UNCLOSED:  unclosed-region.mlir:4:1: error: end of input: expected '}' closing the region opened at line 1, column 50
// UNDEFINED: undefined-value.mlir:2:19: error: use of undeclared SSA value name '%c'
// SUGGEST:   error: unknown pass 'fsue'; did you mean 'fuse'?
// FLAG:      opt-tool: error: unknown argument '--print-ir-afer-all'; did you mean '--print-ir-after-all'?
func.func @f() {
  func.return
}
