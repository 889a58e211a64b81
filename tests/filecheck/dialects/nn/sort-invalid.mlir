// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of nn.argsort.

func.func @nn_argsort_0(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.argsort' op axis 2 is out of range for rank 2}}
  %r = nn.argsort %x {axis = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xi64>
  func.return
}

// -----

func.func @nn_argsort_1(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.argsort' op unsigned is for integer inputs, got tensor<3x4xf32>}}
  %r = nn.argsort %x {axis = 1 : i64, unsigned} : (tensor<3x4xf32>) -> tensor<3x4xi64>
  func.return
}

// -----

func.func @nn_argsort_2(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.argsort' op k = 5 is not in [0, 4] (the size of the axis)}}
  %r = nn.argsort %x {axis = 1 : i64, k = 5 : i64} : (tensor<3x4xf32>) -> tensor<3x5xi64>
  func.return
}

// -----

func.func @nn_argsort_3(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.argsort' op result type tensor<3x4xi32> does not match the inferred type tensor<3x4xi64>}}
  %r = nn.argsort %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xi32>
  func.return
}

// -----

func.func @nn_argsort_4(%x: tensor<?xf32>) {
  // expected-error @+1 {{'nn.argsort' op a top-k (k = 2) needs a static size along the axis, got tensor<?xf32>}}
  %r = nn.argsort %x {axis = 0 : i64, k = 2 : i64} : (tensor<?xf32>) -> tensor<2xi64>
  func.return
}
