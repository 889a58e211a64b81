"""Suite-wide settings."""

import os

# The engine verifies its lowering once by default; the suite verifies after
# every pass, so that a pass leaving broken IR is named.
os.environ.setdefault("DFC_VERIFY_EACH", "1")

