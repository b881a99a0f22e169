"""scoregate: decide, with evidence, whether a new prompt or model beats production."""

__version__ = "0.1.0"

__all__ = ["__version__"]
