"""The generated references in docs/ match the code they are generated from."""

from dfc.tools import docgen


def test_generated_docs_are_current():
    assert docgen.main(["--check"]) == 0, "run `python -m dfc.tools.docgen` and commit docs/"


def test_op_reference_lists_every_op_with_its_expansion_and_rule():
    from dfc.dialects.nn import NN

    text = docgen.op_reference()
    for op in NN.operations:
        assert f"### `{op.name}`" in text
    assert "| `nn.linear` | - (dot_general, add) | Gemm (transB = 1) | yes | yes |" in text


def test_pass_reference_lists_every_project_pass_and_its_options():
    from dfc.passes import PROJECT_PASSES

    text = docgen.pass_reference()
    for name in PROJECT_PASSES:
        assert f"## `{name}`" in text
    assert "- `threads` (int, default `0`)" in text


def test_api_reference_lists_every_public_name():
    import dfc

    text = docgen.api_reference()
    for name in dfc.__all__:
        if name != "__version__":
            assert f"`dfc.{name}" in text, name
    assert "### `dfc.grad(f, argnums=0, has_aux=False, memory_budget=None)`" in text
    assert "- `mlir(stage='frontend', wrt=None)`: The module as text" in text
