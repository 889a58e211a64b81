// RUN: opt-tool %s --split-input-file --verify-diagnostics

// One case per verifier message of the shape nn ops.

func.func @nn_slice_0(%a: tensor<5x6xf32>) {
  // expected-error @+1 {{'nn.slice' op start_indices has 1 elements, expected one per dimension (2)}}
  %r = nn.slice %a {start_indices = array<i64: 0>, limit_indices = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<5x6xf32>) -> tensor<1x1xf32>
  func.return
}

// -----

func.func @nn_slice_1(%a: tensor<5xf32>) {
  // expected-error @+1 {{'nn.slice' op dimension 0: stride 0 must be at least 1}}
  %r = nn.slice %a {start_indices = array<i64: 0>, limit_indices = array<i64: 5>, strides = array<i64: 0>} : (tensor<5xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @nn_slice_2(%a: tensor<5xf32>) {
  // expected-error @+1 {{'nn.slice' op dimension 0: need 0 <= start (1) <= limit (6) <= size (5)}}
  %r = nn.slice %a {start_indices = array<i64: 1>, limit_indices = array<i64: 6>, strides = array<i64: 1>} : (tensor<5xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @nn_pad_3(%a: tensor<5xf32>, %v: tensor<f64>) {
  // expected-error @+1 {{'nn.pad' op padding_value must be a 0-d tensor of f32, got tensor<f64>}}
  %r = nn.pad %a, %v {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<5xf32>, tensor<f64>) -> tensor<5xf32>
  func.return
}

// -----

func.func @nn_pad_4(%a: tensor<5xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'nn.pad' op dimension 0: interior padding -1 is negative}}
  %r = nn.pad %a, %v {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: -1>} : (tensor<5xf32>, tensor<f32>) -> tensor<1xf32>
  func.return
}

// -----

func.func @nn_pad_5(%a: tensor<5xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'nn.pad' op dimension 0: padding gives a negative size -2}}
  %r = nn.pad %a, %v {edge_padding_low = array<i64: -4>, edge_padding_high = array<i64: -3>, interior_padding = array<i64: 0>} : (tensor<5xf32>, tensor<f32>) -> tensor<1xf32>
  func.return
}

// -----

func.func @nn_concatenate_6(%a: tensor<2x3xf32>, %b: tensor<2x3xf64>) {
  // expected-error @+1 {{'nn.concatenate' op input 1 has element type f64, not f32}}
  %r = nn.concatenate %a, %b {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @nn_concatenate_7(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.concatenate' op dimension 2 is out of range for rank 2}}
  %r = nn.concatenate %a, %a {dimension = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @nn_reverse_8(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.reverse' op dimensions [1, 1] repeat a dimension}}
  %r = nn.reverse %a {dimensions = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @nn_iota_9() {
  // expected-error @+1 {{'nn.iota' op iota_dimension 2 is out of range for rank 2}}
  %r = nn.iota {iota_dimension = 2 : i64} : tensor<2x3xf32>
  func.return
}

// -----

func.func @nn_broadcast_in_dim_10(%a: tensor<3xf32>) {
  // expected-error @+1 {{'nn.broadcast_in_dim' op broadcast dimension 2 is out of range for rank 2}}
  %r = nn.broadcast_in_dim %a {broadcast_dimensions = array<i64: 2>} : (tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @nn_dynamic_slice_11(%a: tensor<5x6xf32>, %i: tensor<i32>) {
  // expected-error @+1 {{'nn.dynamic_slice' op 1 start indices given, expected one per dimension (2)}}
  %r = nn.dynamic_slice %a, %i {slice_sizes = array<i64: 2, 2>} : (tensor<5x6xf32>, tensor<i32>) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @nn_dynamic_slice_12(%a: tensor<5xf32>, %i: tensor<i32>) {
  // expected-error @+1 {{'nn.dynamic_slice' op dimension 0: slice size 6 is not in [0, 5]}}
  %r = nn.dynamic_slice %a, %i {slice_sizes = array<i64: 6>} : (tensor<5xf32>, tensor<i32>) -> tensor<6xf32>
  func.return
}

// -----

func.func @nn_dynamic_update_slice_13(%a: tensor<5xf32>, %u: tensor<6xf32>, %i: tensor<i32>) {
  // expected-error @+1 {{'nn.dynamic_update_slice' op update tensor<6xf32> is larger than the operand tensor<5xf32>}}
  %r = nn.dynamic_update_slice %a, %u, %i : (tensor<5xf32>, tensor<6xf32>, tensor<i32>) -> tensor<5xf32>
  func.return
}
