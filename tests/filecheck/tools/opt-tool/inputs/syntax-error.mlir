func.func @f(%x: tensor<3xf32>) {
  %c0 = arith.constant 0 : index
  %v = df.read %x[%c0 : tensor<3xf32>
  func.return
}
