// RUN: opt-tool %s --split-input-file --verify-diagnostics --convert-stablehlo

// Complex numbers are not ordered (EQ and NE compare them), nor sorted.

func.func @ordering(%a: tensor<2xcomplex<f32>>) -> tensor<2xi1> {
  // expected-error @+1 {{convert-stablehlo: compare LT of complex numbers is not supported (EQ and NE are)}}
  %0 = stablehlo.compare LT, %a, %a : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1>
  func.return %0 : tensor<2xi1>
}

// -----

func.func @clamp(%a: tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>> {
  // expected-error @+1 {{convert-stablehlo: 'stablehlo.clamp' of complex numbers is not supported}}
  %0 = stablehlo.clamp %a, %a, %a : tensor<2xcomplex<f64>>
  func.return %0 : tensor<2xcomplex<f64>>
}

// -----

func.func @complex_f16(%a: tensor<2xcomplex<f16>>) -> tensor<2xcomplex<f16>> {
  // expected-error @+1 {{convert-stablehlo: 'stablehlo.add' on element type complex<f16> is not supported}}
  %0 = stablehlo.add %a, %a : tensor<2xcomplex<f16>>
  func.return %0 : tensor<2xcomplex<f16>>
}
