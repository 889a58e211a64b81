"""Automatic differentiation of df programs."""
