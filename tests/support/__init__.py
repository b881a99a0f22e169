"""Doubles, helpers and plug-in fixtures the tests share (imported as `support.X`; tests/ is on pytest's pythonpath)."""
