"""The use cases (run, compare, rank, leaderboard, calibrate, hard cases, invalidate, promote)."""
