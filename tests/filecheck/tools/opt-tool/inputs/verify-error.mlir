func.func @f(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  %c = nn.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  func.return
}
