"""Langfuse: datasets and prompts sync, runs as Langfuse experiments, scores, promotion."""
