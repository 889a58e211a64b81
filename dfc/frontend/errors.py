"""`FrontendError`: a construct of the user's Python function that the frontend
does not translate, located at its `file:line:col`."""

from __future__ import annotations

from dfc.dialects.diagnostics import CompileError


class FrontendError(CompileError):
    """Raised for unsupported or invalid Python constructs; `str()` is
    `file:line:col: error: message`, pointing into the user's source."""
