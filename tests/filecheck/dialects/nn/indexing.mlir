// RUN: opt-tool %s | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool | filecheck %s
// RUN: opt-tool %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// nn.gather (dialects/nn_indexing.py) as an embedding lookup and as
// take_along_axis (with batching dimensions); the generic form parses back.

// CHECK-LABEL: func.func @gather
// CHECK-NEXT:    %{{.*}} = nn.gather %x, %i {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>} : (tensor<10x8xf32>, tensor<5x1xi64>) -> tensor<5x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.gather %y, %j {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, start_indices_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, index_vector_dim = 2 : i64, slice_sizes = array<i64: 1, 1>} : (tensor<3x5xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "gather"
// GENERIC:       "nn.gather"(%{{.*}}, %{{.*}}) <{offset_dims = array<i64: 1>
func.func @gather(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>, %y: tensor<3x5xf32>, %j: tensor<3x2xi32>) {
  %0 = nn.gather %x, %i {offset_dims = array<i64: 1>, collapsed_slice_dims = array<i64: 0>, operand_batching_dims = array<i64>, start_indices_batching_dims = array<i64>, start_index_map = array<i64: 0>, index_vector_dim = 1 : i64, slice_sizes = array<i64: 1, 8>} : (tensor<10x8xf32>, tensor<5x1xi64>) -> tensor<5x8xf32>
  %1 = nn.gather %y, %j {offset_dims = array<i64>, collapsed_slice_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, start_indices_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, index_vector_dim = 2 : i64, slice_sizes = array<i64: 1, 1>} : (tensor<3x5xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  func.return
}

// CHECK-LABEL: func.func @scatter
// CHECK-NEXT:    %{{.*}} = nn.scatter %x, %i, %u {kind = "add", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x8xf32>, tensor<5x1xi64>, tensor<5x8xf32>) -> tensor<10x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.scatter %y, %j, %v {kind = "replace", update_window_dims = array<i64: 0>, inserted_window_dims = array<i64: 1>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 1>, index_vector_dim = 1 : i64} : (tensor<3x6xf32>, tensor<4xi32>, tensor<3x4xf32>) -> tensor<3x6xf32>
func.func @scatter(%x: tensor<10x8xf32>, %i: tensor<5x1xi64>, %u: tensor<5x8xf32>, %y: tensor<3x6xf32>, %j: tensor<4xi32>, %v: tensor<3x4xf32>) {
  %0 = nn.scatter %x, %i, %u {kind = "add", update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64} : (tensor<10x8xf32>, tensor<5x1xi64>, tensor<5x8xf32>) -> tensor<10x8xf32>
  %1 = nn.scatter %y, %j, %v {kind = "replace", update_window_dims = array<i64: 0>, inserted_window_dims = array<i64: 1>, input_batching_dims = array<i64>, scatter_indices_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 1>, index_vector_dim = 1 : i64} : (tensor<3x6xf32>, tensor<4xi32>, tensor<3x4xf32>) -> tensor<3x6xf32>
  func.return
}
