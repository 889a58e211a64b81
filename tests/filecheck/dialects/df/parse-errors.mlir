// RUN: opt-tool %s --split-input-file --verify-diagnostics

func.func @bound_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 2 bounds for 2 map variables, got 1}}
  %y = df.map (%i, %j) in (4) outs(%o = %x : tensor<4xf32>) {
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @result_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = df.map (%i) in (4) outs(%o = %x : tensor<4xf32>) {
  // expected-error @+1 {{result types must equal the outs types}}
  } -> tensor<4xf64>
  func.return %y : tensor<4xf32>
}

// -----

func.func @write_type(%x: tensor<4xf32>, %f: f32) -> tensor<4xf32> {
  %y = df.map (%i) in (4) outs(%o = %x : tensor<4xf32>) {
    // expected-error @+1 {{expected a tensor or memref type, got f32}}
    df.write %f, %o[%i] : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
