"""Outside systems that are not mirrors of a run: Langfuse transport, catalog sync, prompt source, feedback import."""
