// A three-layer perceptron on a batch of 8 MNIST-sized inputs, with PyTorch's
// weight layout: relu(linear), relu(linear), linear, log_softmax over the
// classes, and the mean negative log-likelihood of the integer labels.
func.func @mlp(%x: tensor<8x784xf32>, %labels: tensor<8xi64>,
               %w1: tensor<120x784xf32>, %b1: tensor<120xf32>,
               %w2: tensor<32x120xf32>, %b2: tensor<32xf32>,
               %w3: tensor<10x32xf32>, %b3: tensor<10xf32>) -> tensor<f32> {
  %h1 = nn.linear %x, %w1, %b1 : (tensor<8x784xf32>, tensor<120x784xf32>, tensor<120xf32>) -> tensor<8x120xf32>
  %a1 = nn.relu %h1 : (tensor<8x120xf32>) -> tensor<8x120xf32>
  %h2 = nn.linear %a1, %w2, %b2 : (tensor<8x120xf32>, tensor<32x120xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %a2 = nn.relu %h2 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %logits = nn.linear %a2, %w3, %b3 : (tensor<8x32xf32>, tensor<10x32xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %logp = nn.log_softmax %logits {axis = -1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %loss = nn.nll_loss %logp, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  func.return %loss : tensor<f32>
}
