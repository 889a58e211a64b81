// RUN: opt-tool %s --split-input-file --verify-diagnostics

// Verifier messages of nn.gather.

func.func @nn_gather_0(%x: tensor<10x8xf32>, %i: tensor<5x1xf32>) {
  // expected-error @+1 {{'nn.gather' op start_indices must be an integer tensor, got tensor<5x1xf32>}}
  %r = nn.gather %x, %i {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>} : (tensor<10x8xf32>, tensor<5x1xf32>) -> tensor<5x8xf32>
  func.return
}

// -----

func.func @nn_gather_1(%x: tensor<10x8xf32>, %i: tensor<5x2xi64>) {
  // expected-error @+1 {{'nn.gather' op start_index_map has 1 elements, the index vector 2}}
  %r = nn.gather %x, %i {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>} : (tensor<10x8xf32>, tensor<5x2xi64>) -> tensor<5x8xf32>
  func.return
}

// -----

func.func @nn_gather_2(%y: tensor<4x5xf32>, %j: tensor<3x2xi32>) {
  // expected-error @+1 {{'nn.gather' op batching dimension sizes differ: operand 0 (4), start_indices 0 (3)}}
  %r = nn.gather %y, %j {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, start_indices_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, index_vector_dim = 2 : i64, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @nn_gather_3(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>) {
  // expected-error @+1 {{'nn.gather' op offset_dims [0, 1] must be 1 increasing result dimensions}}
  %r = nn.gather %x, %i {offset_dims = array<i64: 0, 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>} : (tensor<10x8xf32>, tensor<5x1xi64>) -> tensor<5x8xf32>
  func.return
}

// -----

func.func @nn_scatter_4(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>, %u: tensor<5x8xf32>) {
  // expected-error @+1 {{'nn.scatter' op kind must be one of add, mul, max, min, replace, got 'xor'}}
  %r = nn.scatter %x, %i, %u {kind = "xor", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x8xf32>, tensor<5x1xi64>, tensor<5x8xf32>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @nn_scatter_5(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>, %u: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.scatter' op updates tensor<4x8xf32> do not have the shape [5, 8] the indices and windows give}}
  %r = nn.scatter %x, %i, %u {kind = "add", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x8xf32>, tensor<5x1xi64>, tensor<4x8xf32>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @nn_scatter_6(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>, %u: tensor<5x8xf64>) {
  // expected-error @+1 {{'nn.scatter' op updates element type f64 is not the operand's f32}}
  %r = nn.scatter %x, %i, %u {kind = "add", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x8xf32>, tensor<5x1xi64>, tensor<5x8xf64>) -> tensor<10x8xf32>
  func.return
}
