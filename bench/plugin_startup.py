"""`scoregate --help` start-up with plug-in support, as a ratio to the same help with plug-ins never read.

Three variants, interleaved in one run, each a fresh interpreter running `scoregate --help` (no plug-in package
installed): `without` patches the plug-in listing out (scoregate before plug-ins), `now` is the command as it is,
and `metadata` forces the entry-point scan through `importlib.metadata` (what the pre-filter of
`scoregate.support.registry` avoids). Writes bench/results/plugin_startup.json (medians and ratios to `without`).

    .venv/bin/python bench/plugin_startup.py [--repeats 21]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HELP = (
    "import sys\nsys.argv = ['scoregate', '--help']\nimport scoregate.cli\n"
    "try:\n    scoregate.cli.main()\nexcept SystemExit:\n    pass\n"
)
VARIANTS = {
    "without": "import scoregate.app.plugin_listing as p\np.installed_plugins = lambda: []\n"
    "import scoregate.app.track_listing as t\nt.declared = lambda group: []\n"
    "import scoregate.cli.commands as c\nc.COMMANDS.plugins = lambda: {}\n" + HELP,
    "now": HELP,
    "metadata": "import scoregate.support.registry as r\nr._may_declare = lambda prefix: True\n" + HELP,
}


def timed(code: str) -> float:
    """Seconds one fresh interpreter takes to run `code`."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    """Run the variants interleaved and write their medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "plugin_startup.json")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.repeats):
        for name, code in VARIANTS.items():
            times[name].append(timed(code))
    medians = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "repeats": args.repeats,
        "median_s": {name: round(value, 4) for name, value in medians.items()},
        "ratio_to_without": {name: round(value / medians["without"], 3) for name, value in medians.items()},
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
