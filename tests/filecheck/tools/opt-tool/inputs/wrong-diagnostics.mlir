func.func @f(%a: tensor<2xi32>) {
  // expected-error @+1 {{wrong text}}
  %b = nn.exp %a : (tensor<2xi32>) -> tensor<2xi32>
  func.return
}

// -----

func.func @g() {
  // expected-error @+1 {{never happens}}
  func.return
}

// -----

func.func @h(%a: tensor<2xi32>) {
  // expected-warning @+1 {{input must have a float element type}}
  %b = nn.exp %a : (tensor<2xi32>) -> tensor<2xi32>
  func.return
}
