"""The backward rule of `nn.dft` (`dialects.nn_fft`): the DFT is linear, and the adjoint of a
complex-to-complex transform is the conjugate transform (the opposite sign, the same scale:
its twiddle matrix, real and symmetric in j and k, transposed). The real-to-complex and
complex-to-real kinds have no rule: they are differentiated through their expansion.
"""

from __future__ import annotations

from dfc.dialects.nn_fft import DftOp
from dfc.passes.autodiff.rule_table import RuleTable, ins

FFT_BACKWARD = RuleTable()


@FFT_BACKWARD.rule("nn.dft")
def _dft(b, op, grads, required):
    assert isinstance(op, DftOp)
    if op.kind.data != "c2c":
        return None
    (g,) = grads
    return [ins(b, DftOp(g, op.axis.value.data, "c2c", inverse=op.inverse is None, scale=op.scale.data))]
