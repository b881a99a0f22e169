"""A throwaway track, the whole of it in this folder: `kind: brevity` counts a reply's words; the run block pools them.

tests/tracks/test_track_plugin.py adds the package to `tracks/listing.py`'s list (the one line a real track adds).
"""
