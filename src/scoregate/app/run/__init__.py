"""The run wing: one experiment run as a list of steps (`steps.py`), its options (`run_options.py`) and the
modules each step calls. Start reading at `steps.py`."""
