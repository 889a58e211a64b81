// RUN: opt-tool %s --split-input-file --verify-diagnostics

// Accesses whose index provably leaves the buffer in some iteration.

func.func @read_past_the_end(%x: tensor<8xf64>) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %r = df.map (%i) in (8) outs(%o = %e : tensor<8xf64>) {
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    // expected-error @+1 {{index 0 ranges over [1, 8], outside dimension 0 of size 8}}
    %v = df.read %x[%j] : tensor<8xf64>
    df.write %v, %o[%i] : tensor<8xf64>
  } -> tensor<8xf64>
  func.return %r : tensor<8xf64>
}

// -----

func.func @map_larger_than_its_tensor(%x: tensor<8xf64>) -> tensor<9xf64> {
  %e = tensor.empty() : tensor<9xf64>
  %r = df.map (%i) in (9) outs(%o = %e : tensor<9xf64>) {
    // expected-error @+1 {{index 0 ranges over [0, 8], outside dimension 0 of size 8}}
    %v = df.read %x[%i] : tensor<8xf64>
    df.write %v, %o[%i] : tensor<9xf64>
  } -> tensor<9xf64>
  func.return %r : tensor<9xf64>
}

// -----

func.func @constant_past_the_end(%x: tensor<4x8xf64>) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %r = df.map (%i) in (8) outs(%o = %e : tensor<8xf64>) {
    %c4 = arith.constant 4 : index
    // expected-error @+1 {{index 0 ranges over [4, 4], outside dimension 0 of size 4}}
    %v = df.read %x[%c4, %i] : tensor<4x8xf64>
    df.write %v, %o[%i] : tensor<8xf64>
  } -> tensor<8xf64>
  func.return %r : tensor<8xf64>
}

// -----

func.func @write_before_the_start(%x: tensor<8xf64>) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %r = df.map (%i) in (8) outs(%o = %e : tensor<8xf64>) {
    %c1 = arith.constant 1 : index
    %j = arith.subi %i, %c1 : index
    %v = df.read %x[%i] : tensor<8xf64>
    // expected-error @+1 {{index 0 ranges over [-1, 6], outside dimension 0 of size 8}}
    df.write %v, %o[%j] : tensor<8xf64>
  } -> tensor<8xf64>
  func.return %r : tensor<8xf64>
}

// -----

func.func @transposed_read_of_a_wide_tensor(%x: tensor<4x8xf64>) -> tensor<8x8xf64> {
  %e = tensor.empty() : tensor<8x8xf64>
  %r = df.map (%i, %j) in (8, 8) outs(%o = %e : tensor<8x8xf64>) {
    // expected-error @+1 {{index 0 ranges over [0, 7], outside dimension 0 of size 4}}
    %v = df.read %x[%j, %i] : tensor<4x8xf64>
    df.write %v, %o[%i, %j] : tensor<8x8xf64>
  } -> tensor<8x8xf64>
  func.return %r : tensor<8x8xf64>
}

// -----

func.func @loop_variable_past_the_end(%x: tensor<4xf64>) -> tensor<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %r = scf.for %t = %c0 to %c5 step %c1 iter_args(%acc = %x) -> (tensor<4xf64>) {
    %m = df.map (%i) in (4) outs(%o = %acc : tensor<4xf64>) {
      // expected-error @+1 {{index 0 ranges over [0, 4], outside dimension 0 of size 4}}
      %v = df.read %x[%t] : tensor<4xf64>
      df.write %v, %o[%i] : tensor<4xf64>
    } -> tensor<4xf64>
    scf.yield %m : tensor<4xf64>
  }
  func.return %r : tensor<4xf64>
}
