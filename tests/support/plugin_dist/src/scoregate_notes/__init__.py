"""A scoregate plug-in package: the evaluator kind `shouts` and the sink `notes`."""
