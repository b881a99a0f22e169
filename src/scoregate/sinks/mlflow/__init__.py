"""The MLflow mirror: a stored run as an MLflow run (params, metrics, tags, description, evaluation rows)."""
