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
