// RUN: opt-tool %s '--autodiff{func=newton wrt=0}' | filecheck %s --check-prefix=TAPE
// RUN: opt-tool %s '--autodiff{func=newton wrt=0 recompute=true}' | filecheck %s --check-prefix=RECOMPUTE

// A data-dependent while loop: counted (one more index carried), replayed by
// an scf.for over the count, whose tape has one row per trip (a dynamic size).
// TAPE-LABEL: func.func @newton_grad(%a: tensor<f64>, %tol: tensor<f64>, %seed: tensor<f64>) -> (tensor<f64>, tensor<f64>)
// TAPE:         %[[ZERO:.*]] = arith.constant 0 : index
// TAPE:         %{{.*}}, %[[N:.*]] = scf.while (%{{.*}} = %a, %[[K:.*]] = %[[ZERO]]) : (tensor<f64>, index) -> (tensor<f64>, index) {
// TAPE:           scf.condition(%{{.*}}) %{{.*}}, %[[K]] : tensor<f64>, index
// TAPE:         } do {
// TAPE:           %[[K1:.*]] = arith.addi
// TAPE:           scf.yield %{{.*}}, %[[K1]] : tensor<f64>, index
// TAPE:         %[[TAPE:.*]] = tensor.empty(%{{.*}}) : tensor<?xf64>
// TAPE:         %[[R:.*]], %[[T:.*]] = scf.for %{{.*}} = %[[ZERO]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %a, %{{.*}} = %[[TAPE]]) -> (tensor<f64>, tensor<?xf64>) {
// TAPE-NOT:       nn.compare
// TAPE:           df.write %{{.*}}, %{{.*}}[%{{.*}}] : tensor<?xf64>
// TAPE:         scf.for
// TAPE:           df.read %[[T]][%{{.*}}] : tensor<?xf64>
// TAPE:         func.return %[[R]], %{{.*}} : tensor<f64>, tensor<f64>

// Recomputation reruns the replay loop up to the reversed trip: no tape.
// RECOMPUTE-LABEL: func.func @newton_grad
// RECOMPUTE:         %{{.*}}, %[[N:.*]] = scf.while
// RECOMPUTE-NOT:     tensor<?xf64>
// RECOMPUTE:         scf.for %{{.*}} = %{{.*}} to %[[N]]
// RECOMPUTE:         scf.for
// RECOMPUTE:           scf.for
// RECOMPUTE:         func.return
func.func @newton(%a: tensor<f64>, %tol: tensor<f64>) -> tensor<f64> {
  %r = scf.while (%x = %a) : (tensor<f64>) -> tensor<f64> {
    %sq = nn.mul %x, %x : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %d = nn.sub %sq, %a : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %e = nn.abs %d : (tensor<f64>) -> tensor<f64>
    %c = nn.compare %e, %tol {direction = "GT"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %cc = tensor.extract %c[] : tensor<i1>
    scf.condition(%cc) %x : tensor<f64>
  } do {
  ^bb0(%x2: tensor<f64>):
    %q = nn.div %a, %x2 : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %s = nn.add %x2, %q : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %h = nn.full {value = 0.5 : f64} : tensor<f64>
    %y = nn.mul %h, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>
    scf.yield %y : tensor<f64>
  }
  func.return %r : tensor<f64>
}
