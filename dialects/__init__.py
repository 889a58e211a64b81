"""The project's dialects: df (dataflow maps and tasklets) and nn (library ops)."""
