// RUN: opt-tool %s --split-input-file --verify-diagnostics

func.func @read_rank(%x: tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expected 2 indices for tensor<4x8xf32>, got 1}}
  %v = df.read %x[%c0] : tensor<4x8xf32>
  func.return
}

// -----

func.func @read_result_type(%x: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{result type f64 must be the element type of tensor<4xf32>}}
  %v = "df.read"(%x, %c0) : (tensor<4xf32>, index) -> f64
  func.return
}

// -----

func.func @read_index_type(%x: tensor<4xf32>) {
  %c0 = arith.constant 0 : i64
  // expected-error @+1 {{'df.read' op i64 should be of base attribute index}}
  %v = "df.read"(%x, %c0) : (tensor<4xf32>, i64) -> f32
  func.return
}

// -----

func.func @write_outside_map(%x: tensor<4xf32>, %f: f32) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{df.write must write into an output block argument of an enclosing df.map}}
  "df.write"(%f, %x, %c0) : (f32, tensor<4xf32>, index) -> ()
  func.return
}

// -----

func.func @write_value_type(%x: tensor<4xf32>, %f: f64) -> tensor<4xf32> {
  %y = df.map (%i) in (4) outs(%o = %x : tensor<4xf32>) {
    // expected-error @+1 {{written value of type f64 does not match element type of tensor<4xf32>}}
    "df.write"(%f, %o, %i) : (f64, tensor<4xf32>, index) -> ()
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @write_collides(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.map (%i, %j) in (4, 8) outs(%o = %init : tensor<4xf32>) {
    %v = df.read %x[%i, %j] : tensor<4x8xf32>
    // expected-error @+1 {{plain write collides across iterations: its index does not depend on map variable %j (extent 8); use wcr(add|mul|max|min) to reduce}}
    df.write %v, %o[%i] : tensor<4xf32>
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @write_collides_after_simplification(%x: tensor<8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %y = df.map (%i) in (8) outs(%o = %init : tensor<8xf32>) {
    %v = df.read %x[%i] : tensor<8xf32>
    %z = arith.subi %i, %i : index
    // expected-error @+1 {{plain write collides across iterations: its index does not depend on map variable %i (extent 8)}}
    df.write %v, %o[%z] : tensor<8xf32>
  } -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// -----

func.func @write_collides_in_nested_map(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.map (%i) in (4) outs(%o = %init : tensor<4xf32>) {
    df.map (%j) in (8) {
      %v = df.read %x[%i, %j] : tensor<4x8xf32>
      // expected-error @+1 {{does not depend on map variable %j (extent 8)}}
      df.write %v, %o[%i] : tensor<4xf32>
    }
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @unknown_wcr(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<f32> {
  %y = df.map (%i) in (4) outs(%o = %init : tensor<f32>) {
    %v = df.read %x[%i] : tensor<4xf32>
    // expected-error @+1 {{unknown wcr kind 'sub', expected one of add, mul, max, min}}
    df.write %v, %o[] wcr(sub) : tensor<f32>
  } -> tensor<f32>
  func.return %y : tensor<f32>
}

// -----

func.func @wcr_on_i1(%x: tensor<4xi1>, %init: tensor<i1>) -> tensor<i1> {
  %y = df.map (%i) in (4) outs(%o = %init : tensor<i1>) {
    %v = df.read %x[%i] : tensor<4xi1>
    // expected-error @+1 {{wcr(add) is not supported on element type i1}}
    df.write %v, %o[] wcr(add) : tensor<i1>
  } -> tensor<i1>
  func.return %y : tensor<i1>
}

// -----

func.func @tasklet_arg_types(%a: f32) {
  // expected-error @+1 {{tasklet block argument types (f64) do not match its operand types (f32)}}
  %r = "df.tasklet"(%a) ({
  ^bb0(%u: f64):
    "df.yield"(%u) : (f64) -> ()
  }) : (f32) -> f64
  func.return
}

// -----

func.func @tasklet_yield_types(%a: f32) {
  // expected-error @+1 {{df.yield types (f32) do not match the tasklet result types (f64)}}
  %r = df.tasklet (%a) : (f32) -> f64 {
  ^bb0(%u: f32):
    df.yield %u : f32
  }
  func.return
}

// -----

func.func @tasklet_no_yield(%a: f32) {
  // expected-error @+1 {{tasklet body must end with df.yield}}
  %r = "df.tasklet"(%a) ({
  ^bb0(%u: f32):
    %v = arith.negf %u : f32
  }) : (f32) -> f32
  func.return
}

// -----

func.func @tasklet_foreign_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{tasklet bodies hold only arith and math ops, found tensor.dim}}
  %r = "df.tasklet"(%a) ({
  ^bb0(%u: tensor<4xf32>):
    %c0 = arith.constant 0 : index
    %d = tensor.dim %u, %c0 : tensor<4xf32>
    "df.yield"(%d) : (index) -> ()
  }) : (tensor<4xf32>) -> index
  func.return
}

// -----

func.func @yield_outside_tasklet(%a: f32) {
  df.map (%i) in (4) {
    // expected-error @+1 {{'df.yield' expects parent op 'df.tasklet'}}
    "df.yield"(%a) : (f32) -> ()
  }
  func.return
}

// -----

func.func @map_block_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 1 map variables and 1 output block arguments, got 1 block arguments}}
  %y = "df.map"(%x) <{static_bounds = array<i64: 4>, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%i: index):
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @map_iv_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{map variable must be index, got i64}}
  %y = "df.map"(%x) <{static_bounds = array<i64: 4>, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%i: i64, %o: tensor<4xf32>):
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @map_result_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{output #0: initial value, block argument and result types differ (tensor<4xf32>, tensor<4xf32>, tensor<4xf64>)}}
  %y = "df.map"(%x) <{static_bounds = array<i64: 4>, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%i: index, %o: tensor<4xf32>):
  }) : (tensor<4xf32>) -> tensor<4xf64>
  func.return %y : tensor<4xf64>
}

// -----

func.func @map_dynamic_bounds(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected one dynamic bound operand per dynamic bound}}
  %y = "df.map"(%x) <{static_bounds = array<i64: -9223372036854775808>, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%i: index, %o: tensor<4xf32>):
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @map_negative_bound(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{map bounds must be non-negative}}
  %y = "df.map"(%x) <{static_bounds = array<i64: -3>, operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%i: index, %o: tensor<4xf32>):
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
