// RUN: python -c "import compiler, sys; print(compiler.parse_module(open(sys.argv[1]).read()))" %s | filecheck %s

// CHECK: df.map (%i, %j) in (4, 8)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = df.map (%i, %j) in (4, 8) outs(%o = %e : tensor<4x8xf32>) {
    %a = df.read %x[%i, %j] : tensor<4x8xf32>
    df.write %a, %o[%i, %j] : tensor<4x8xf32>
  } -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
