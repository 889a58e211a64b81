"""Every nn op has a row in the StableHLO/ONNX name table (dialects/nn_names.py)."""

from dfc.dialects.nn import NN
from dfc.dialects.nn_names import EXTERNAL_NAMES


def test_every_nn_op_has_external_names():
    ops = {op.name for op in NN.operations}
    assert ops - set(EXTERNAL_NAMES) == set(), "add the new ops to dialects/nn_names.py"
    assert set(EXTERNAL_NAMES) - ops == set(), "names of ops that do not exist"
