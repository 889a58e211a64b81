"""The project's dialects: df (dataflow maps and tasklets) and nn (library ops).

Importing the package fills the tables its modules read when first used:
df's canonicalization patterns (`df.CANONICALIZATION_PATTERNS`, filled by
`df_canonicalization`, which builds df ops and so is not imported by df).
"""

from dfc.dialects import df_canonicalization, nn  # noqa: F401
