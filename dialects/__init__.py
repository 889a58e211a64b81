"""The project's dialects: df (dataflow maps and tasklets) and nn (library ops)."""

# nn first: its op families (nn_elementwise, ...) derive from nn's classes and nn lists them.
from dfc.dialects import nn  # noqa: F401
