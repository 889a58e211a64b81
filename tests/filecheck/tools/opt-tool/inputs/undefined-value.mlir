func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = nn.add %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = nn.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}
