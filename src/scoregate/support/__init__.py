"""Helpers with no domain: secret redaction, atomic file writes, process facts, JSON-safe values, close names."""
