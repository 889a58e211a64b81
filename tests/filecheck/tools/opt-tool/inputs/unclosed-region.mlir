func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = nn.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
