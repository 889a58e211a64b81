// Every error is one precise line and exit status 1, never a traceback.
// RUN: not opt-tool %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not opt-tool %s '--cse{foo=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not opt-tool %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=PIPELINE
// RUN: not opt-tool %S/inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not opt-tool %S/inputs/syntax-error.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not opt-tool %S/inputs/verify-error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY

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
func.func @f() {
  func.return
}
