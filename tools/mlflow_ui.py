"""`make mlflow-ui`: start MLflow's UI, say that it takes a while, and print its address once it answers.

`mlflow ui` prints nothing a person can use while it starts: it spawns its web workers, each importing
MLflow, and its first start on a new store also creates the database (28 to 54 s until it answered on a
shared 2-core machine, 89 s seen on another). This wrapper says so before it starts, prints the address
when the UI answers, and passes Ctrl-C on. Usage: `python tools/mlflow_ui.py URL -- COMMAND...`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

from scoregate.support.terminal_text import layout

POLL_S = 0.5
HINT = (
    'scoregate\'s runs are under "Model training" (the switch at the top left; MLflow opens on GenAI, whose '
    "Overview shows no traces); `scoregate runs show RUN` prints the link to a run's experiment."
)


def say(text: str) -> None:
    """Print `text` laid out to the terminal's width (80 without one); URLs and commands are never broken."""
    for line in layout(text, shutil.get_terminal_size().columns):
        print(line, flush=True)


def answers(url: str) -> bool:
    """Whether the server at `url` answers HTTP (any status)."""
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def serve(url: str, command: list[str]) -> int:
    """Run `command` (the UI server); say when `url` answers; return the command's exit code."""
    say(f"MLflow UI: starting on {url}. It can take a minute or more to answer (MLflow starts its workers; "
        "the first start also creates the database); its address is printed again when it answers.")  # fmt: skip
    started = time.monotonic()
    server = subprocess.Popen(command)
    try:
        while server.poll() is None:
            if answers(url):
                say(f"MLflow UI: ready after {time.monotonic() - started:.0f} s on {url} (Ctrl-C stops it).")
                say(HINT)
                return server.wait()
            time.sleep(POLL_S)
        code = server.returncode
        say(f"MLflow UI: `{' '.join(command[:2])}` stopped (exit code {code}) before it answered on {url}; "
            "if its port is taken, choose another: `MLFLOW_PORT=5001 make mlflow-ui`.")  # fmt: skip
        return code or 1
    except KeyboardInterrupt:  # the terminal sent SIGINT to the server too: let it stop
        try:
            return server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            return server.wait()


def main(argv: list[str]) -> int:
    """`URL -- COMMAND...`: serve, and return the server's exit code."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python tools/mlflow_ui.py URL -- COMMAND...", file=sys.stderr)
        return 2
    return serve(argv[0], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
