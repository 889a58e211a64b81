// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of nn.nonzero, nn.gather_points and nn.unique, and of
// a dynamic size reaching an op that needs static shapes.

func.func @nn_nonzero_0(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'nn.nonzero' op result type tensor<?x3xi64> does not match the inferred type tensor<?x2xi64>}}
  %r = nn.nonzero %x : (tensor<3x4xf32>) -> tensor<?x3xi64>
  func.return
}

// -----

func.func @nn_gather_points_0(%x: tensor<3x4xf32>, %i: tensor<?x2xi32>) {
  // expected-error @+1 {{'nn.gather_points' op indices must be a tensor of i64 of rank 1 or more, got tensor<?x2xi32>}}
  %r = nn.gather_points %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<?x2xi32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @nn_gather_points_1(%x: tensor<3x4xf32>, %i: tensor<?x2xi64>) {
  // expected-error @+1 {{'nn.gather_points' op 2 index components from axis 1 do not fit the operand tensor<3x4xf32>}}
  %r = nn.gather_points %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<?x2xi64>) -> tensor<?xf32>
  func.return
}

// -----

func.func @nn_gather_points_2(%x: tensor<3x4xf32>, %i: tensor<2x?x2xi64>) {
  // expected-error @+1 {{'nn.gather_points' op only a rank-2 indices tensor may have a dynamic size, got tensor<2x?x2xi64>}}
  %r = nn.gather_points %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x?x2xi64>) -> tensor<2x?xf32>
  func.return
}

// -----

func.func @nn_reduce_dynamic(%x: tensor<?x5xf32>) {
  // expected-error @+1 {{'nn.reduce' op input must have a static shape, got tensor<?x5xf32>}}
  %r = nn.reduce %x {kind = "sum", axes = array<i64: 1>} : (tensor<?x5xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @nn_exp_dynamic(%x: tensor<?x5xf32>) {
  // expected-error @+1 {{'nn.exp' op input must have a static shape, got tensor<?x5xf32>}}
  %r = nn.exp %x : (tensor<?x5xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

func.func @nn_unique_0(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.unique' op input must be a 1-D tensor of floats or signless integers, got tensor<2x3xf32>}}
  %r = nn.unique %x {part = "values"} : (tensor<2x3xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @nn_unique_1(%x: tensor<3xf32>) {
  // expected-error @+1 {{'nn.unique' op part must be one of values, indices, inverse, counts, got 'sizes'}}
  %r = nn.unique %x {part = "sizes"} : (tensor<3xf32>) -> tensor<?xi64>
  func.return
}
