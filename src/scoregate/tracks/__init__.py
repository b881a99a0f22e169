"""Evaluation tracks as plug-ins: one package per track (metrics, evaluator kind, loaders, run report, CLI)."""
