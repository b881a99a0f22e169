"""The Langfuse mirror: a stored run as a Langfuse experiment (dataset run, traces, item and run-level scores)."""
