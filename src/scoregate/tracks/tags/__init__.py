"""The semantic tags track: gold labels, their dataset, tag metrics, the `kind: tags` evaluator and its run block."""
