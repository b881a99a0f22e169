"""The run record: `runs/<id>/` files, the run lock, invalidation marks, run identity and vocabulary."""
