"""The `scoregate` command: one error handler and distinct exit codes around the app of `cli/commands.py` (the
composition root: every command, its registry and the Typer app)."""

from __future__ import annotations

import os
import sys

import typer

from scoregate.cli.commands import COMMANDS, app
from scoregate.errors import ExitCode, ScoregateError
from scoregate.support.redaction import redact

__all__ = ["app", "main", "os_error_text"]


def _debug() -> bool:
    return os.environ.get("SCOREGATE_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def os_error_text(exc: OSError) -> str:
    """One line for an OSError: the path(s), what the system said, and what to do for a full or read-only disk."""
    import errno

    paths = " → ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    said = exc.strerror or str(exc) or type(exc).__name__
    text = f"{paths}: {said}" if paths else said
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"{text}\n  → free disk space, then run the command again"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{text}\n  → make it writable (or readable), then run the command again"
    return text


def main() -> None:
    """Run the CLI; print user errors without a traceback (SCOREGATE_DEBUG=1 re-raises)."""
    import atexit
    import gc

    # At exit the interpreter collects every object still alive, pydantic's validators and numpy's included: ~0.09 s
    # after a 2,000-item run. Frozen, they are left to the system (the standard streams are flushed all the same;
    # scoregate closes the files it writes, so none waits on a collection to be flushed).
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    from scoregate.support.start_gc import end_collector_hold, hold_collector

    hold_collector()  # until a run's first request is out; any other command turns it back on as it starts
    from scoregate.cli.layout import print_wrapped
    from scoregate.support.console import lazy_console

    err = lazy_console(stderr=True)
    try:
        COMMANDS.plugins()  # the plug-in commands, loaded for their help (a PluginError when one is broken)
        code = app(standalone_mode=False)
    except ScoregateError as exc:
        if _debug():
            raise
        print_wrapped(err, redact(exc.render()), first="error: ", first_style="bold red")
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        sys.exit(int(ExitCode.INTERRUPTED))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(int(ExitCode.INTERRUPTED))
    except OSError as exc:  # a file or the disk failed where no command said which: name the path, no traceback
        if _debug():
            raise
        print_wrapped(err, redact(os_error_text(exc)), first="error: ", first_style="bold red")
        sys.exit(int(ExitCode.ERROR))
    except Exception as exc:  # usage errors arrive here in non-standalone mode
        import click

        # Newer typer vendors click: its usage errors are `typer.TyperException`s, not `click.ClickException`s.
        usage_errors = (click.ClickException, getattr(typer, "TyperException", click.ClickException))
        show = getattr(exc, "show", None)
        if isinstance(exc, usage_errors) and callable(show):
            show()
            sys.exit(int(getattr(exc, "exit_code", ExitCode.USAGE)))
        raise
    finally:  # the collector as the caller had it (a run released it at its first request; an error, before)
        end_collector_hold()
    if isinstance(code, int) and code:  # without standalone mode, typer returns a `typer.Exit` code instead
        sys.exit(code)
