"""A throwaway track, the whole of it in this folder: `kind: brevity` counts a reply's words; the run block pools them.

tests/test_track_plugin.py adds `track.TRACK` to `tracks/registry.py`'s list (the one line a real track adds).
"""
