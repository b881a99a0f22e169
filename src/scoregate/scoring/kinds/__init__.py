"""Evaluator kinds: one module per kind (its file's spec, its declarations, how to build it), and the registry."""
