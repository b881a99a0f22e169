"""Langfuse apart from the run mirror: client and transport, datasets/prompts/dashboards/score-config sync, the
prompt source, score import and annotation queues."""
