"""Helpers the tests share (simulated GPU, gradient checks, model zoos, the frontend corpus)."""
