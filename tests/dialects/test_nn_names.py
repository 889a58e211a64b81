"""Every nn op declares what the ways in call it (`EXTERNAL`, dialects/nn_base.py)."""

from dfc.dialects.nn import NN


def test_every_nn_op_declares_its_external_names():
    undeclared = [op.name for op in NN.operations if "EXTERNAL" not in vars(op)]
    assert not undeclared, f"declare EXTERNAL = External(...) on {undeclared}"
