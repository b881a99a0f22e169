"""A plug-in package adds an evaluator kind, a sink and a track, no edit in scoregate: `--help`, `validate` and `run`
see them.

The package is `tests/support/plugin_dist/` (the one docs/extending/plugins.md shows). Each test installs it, or a
broken package built beside it, into a temporary folder (setuptools writes its metadata from pyproject.toml, offline)
that only the `scoregate` subprocess has on its PYTHONPATH: the shared environment is never changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support.projects import copy_shipped, write_yaml

REPO = Path(__file__).resolve().parents[2]
DIST = Path(__file__).resolve().parents[1] / "support" / "plugin_dist"
SCOREGATE = str(Path(sys.executable).with_name("scoregate"))


def install(source: Path, into: Path) -> Path:
    """Install the package folder `source` under `into` (its metadata written by setuptools); the folder to put on
    PYTHONPATH."""
    shutil.copytree(source, into, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"))
    done = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "egg_info"],
        cwd=into,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return into / "src"


def package(root: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]) -> Path:
    """Write a package folder `name` (module `name` with `modules`) declaring `entry_points`; return the folder."""
    folder = root / name
    (folder / "src" / name.replace("-", "_")).mkdir(parents=True)
    groups = "".join(
        f'\n[project.entry-points."{group}"]\n' + "".join(f'{key} = "{value}"\n' for key, value in points.items())
        for group, points in entry_points.items()
    )
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "1.0"\n{groups}\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
        encoding="utf-8",
    )
    for module, source in {"__init__.py": "", **modules}.items():
        (folder / "src" / name.replace("-", "_") / module).write_text(source, encoding="utf-8")
    return folder


def scoregate(args: list[str], cwd: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    """Run the `scoregate` command in `cwd` with `paths` on its PYTHONPATH and no tracker configured."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LANGFUSE_", "MLFLOW_"))}
    env.update(PYTHONPATH=os.pathsep.join(str(path) for path in paths), COLUMNS="80", NO_COLOR="1")
    return subprocess.run([SCOREGATE, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def notes_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/support/plugin_dist installed in a temporary folder: the PYTHONPATH entry that holds it."""
    return install(DIST, tmp_path_factory.mktemp("plugin") / "scoregate-notes")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Three support calls summarised by a scripted model (no network), scored by `kind: shouts`, gated on it."""
    root = tmp_path / "project"
    (root / "datasets").mkdir(parents=True)
    rows = (REPO / "datasets" / "support_calls_v1.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    (root / "datasets" / "calls.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    copy_shipped(root, {"prompts": ["call-summary.yaml"]})
    (root / "evaluators").mkdir()
    write_yaml(root / "evaluators" / "calm_v1.yaml", {"kind": "shouts", "name": "calm_v1", "version": 1})
    canned = {"provider": "scripted", "model": "canned-1", "options": {"default": "Refund SENT by FRIDAY today"}}
    write_yaml(
        root / "scoregate.yaml",
        {
            "project": "plugin-package",
            "settings": {"model": "canned", "concurrency": 1, "bootstrap_resamples": 200},
            "models": {"canned": canned},
            "experiments": {
                "calm": {"dataset": "calls", "prompt": "call-summary", "evaluators": ["calm_v1"], "gates": ["calm"]}
            },
            "gates": [{"name": "calm", "metric": "shouts", "op": "<=", "threshold": 0.6}],
        },
    )
    return root


def test_help_names_the_package_and_what_it_adds(notes_package: Path, tmp_path: Path) -> None:
    shown = scoregate(["--help"], tmp_path, notes_package)

    assert shown.returncode == 0, shown.stderr
    assert "Plug-ins:" in shown.stdout
    assert "scoregate-notes  evaluator kind shouts, sink notes, track terse" in shown.stdout
    assert "  terse            Count the words of a reply as kind: terse does." in shown.stdout  # the track's command
    assert "Plug-ins:" not in scoregate(["--help"], tmp_path).stdout  # nothing installed, nothing listed


def test_validate_accepts_the_plugin_kind_and_refuses_it_without_the_package(
    notes_package: Path, project: Path
) -> None:
    checked = scoregate(["validate"], project, notes_package)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok experiment calm: 3 items, prompts ok, gates ok" in checked.stdout  # the gate names `shouts`

    without = scoregate(["validate"], project)
    assert without.returncode != 0
    assert "'shouts'" in without.stdout + without.stderr


def test_run_scores_with_the_plugin_kind_and_mirrors_to_the_plugin_sink(notes_package: Path, project: Path) -> None:
    ran = scoregate(["run", "calm", "--no-mlflow"], project, notes_package)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    (note,) = [json.loads(line) for line in (project / "notes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert note["call"] == "mirror" and note["verdict"] == "pass"
    assert note["means"] == {"shouts": pytest.approx(2 / 5)}  # SENT, FRIDAY: 2 of the 5 words of every reply
    assert f"notes: run {note['run_id']} noted in" in " ".join(ran.stdout.split())


def test_validate_and_run_see_the_plugin_track_and_its_command_runs(notes_package: Path, project: Path) -> None:
    write_yaml(project / "evaluators" / "brief_v1.yaml", {"kind": "terse", "name": "brief_v1", "version": 1})
    config = yaml.safe_load((project / "scoregate.yaml").read_text(encoding="utf-8"))
    config["experiments"]["calm"]["evaluators"] = ["brief_v1"]
    config["gates"] = [{"name": "calm", "metric": "words_per_reply_run", "op": "<=", "threshold": 10}]
    write_yaml(project / "scoregate.yaml", config)

    checked = scoregate(["validate"], project, notes_package)
    ran = scoregate(["run", "calm", "--no-mlflow", "--json"], project, notes_package)
    counted = scoregate(["terse", "Refund SENT by FRIDAY"], project, notes_package)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok experiment calm: 3 items, prompts ok, gates ok" in checked.stdout  # the gate names the track's metric
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_id = json.loads(ran.stdout)["run_id"]
    summary = json.loads((project / "runs" / run_id / "summary.json").read_text(encoding="utf-8"))
    assert summary["terse"]["metrics"] == {"words_per_reply": 5.0}  # "Refund SENT by FRIDAY today", every reply
    assert [(gate["name"], gate["status"]) for gate in summary["gates"]] == [("calm", "pass")]
    assert (counted.returncode, counted.stdout) == (0, "4 words\n"), counted.stderr
    refused = scoregate(["validate"], project)
    assert refused.returncode != 0 and "'terse'" in refused.stdout + refused.stderr  # without the package


BROKEN_SINK = "class HalfSink:\n    name = 'half'\n\n    def __init__(self, context):\n        pass\n"
KIND_REF = "scoregate_notes.kind:KIND"


MUTE_KIND = """
from typing import Literal

from scoregate.catalog.evaluators import EvaluatorKind, EvaluatorSpec


class MuteSpec(EvaluatorSpec):
    kind: Literal["mute"]


KIND = EvaluatorKind("mute", MuteSpec, lambda spec, judge: None)
"""

COPYCAT_TRACK = """
from scoregate.scoring.kinds.counters import KIND
from scoregate.tracks.base import Track

TRACK = Track(name="copycat", kind=KIND, report=lambda *args: {}, title="Copycat")
"""

TWIN_TRACK = """
from dataclasses import replace

from scoregate_notes.track import TRACK as TERSE

TRACK = replace(TERSE, name="twin")
"""


@pytest.mark.parametrize(
    ("points", "modules", "said"),
    [
        (
            {"scoregate.sinks": {"mlflow": "bad_plugin.sink:HalfSink"}},
            {"sink.py": BROKEN_SINK},
            "plug-in sink 'mlflow' of the package 'bad-plugin' takes the name of scoregate's built-in sink",
        ),
        (
            {"scoregate.kinds": {"loud": "bad_plugin.kind:KIND"}},
            {"kind.py": "import not_installed_anywhere\n"},
            "plug-in 'loud' of the package 'bad-plugin' fails to load (scoregate.kinds: loud = bad_plugin.kind:KIND): "
            "ModuleNotFoundError: No module named 'not_installed_anywhere'",
        ),
        (
            {"scoregate.sinks": {"half": "bad_plugin.sink:HalfSink"}},
            {"sink.py": BROKEN_SINK},
            "plug-in sink 'half' of the package 'bad-plugin' (scoregate.sinks: half = bad_plugin.sink:HalfSink) "
            "does not define configured, mirror, mark_invalid, forget, link",
        ),
        (
            {"scoregate.kinds": {"shouts": KIND_REF}},
            {},
            "two packages declare the plug-in evaluator kind 'shouts': 'bad-plugin' and 'scoregate-notes'",
        ),
        (
            {"scoregate.kinds": {"noisy": KIND_REF}},
            {},
            "plug-in evaluator kind 'noisy' of the package 'bad-plugin' (scoregate.kinds: noisy = "
            "scoregate_notes.kind:KIND) is the kind 'shouts': name the entry point 'shouts'",
        ),
        (
            {"scoregate.kinds": {"mute": "bad_plugin.kind:KIND"}},
            {"kind.py": MUTE_KIND},
            "plug-in evaluator kind 'mute' of the package 'bad-plugin' (scoregate.kinds: mute = bad_plugin.kind:KIND) "
            "needs a spec that says which scores it writes and which way they improve: define score_keys, directions",
        ),
        (
            {"scoregate.tracks": {"extraction": "bad_plugin.track:TRACK"}},
            {"track.py": "TRACK = None\n"},
            "plug-in track 'extraction' of the package 'bad-plugin' takes the name of scoregate's built-in track",
        ),
        (
            {"scoregate.tracks": {"loose": KIND_REF}},
            {},
            "plug-in track 'loose' of the package 'bad-plugin' (scoregate.tracks: loose = scoregate_notes.kind:KIND) "
            "is a EvaluatorKind, not a scoregate.tracks.base.Track",
        ),
        (
            {"scoregate.tracks": {"copycat": "bad_plugin.track:TRACK"}},
            {"track.py": COPYCAT_TRACK},
            "plug-in track 'copycat' of the package 'bad-plugin' (scoregate.tracks: copycat = bad_plugin.track:TRACK) "
            "brings the evaluator kind 'counters', which is scoregate's built-in kind",
        ),
        (
            {"scoregate.tracks": {"twin": "bad_plugin.track:TRACK"}},
            {"track.py": TWIN_TRACK},
            "two tracks bring the evaluator kind 'terse': 'terse' and 'twin' (packages 'scoregate-notes' and "
            "'bad-plugin')",
        ),
        (
            {"scoregate.tracks": {"terse": "scoregate_notes.track:TRACK"}},
            {},
            "two packages declare the plug-in track 'terse': 'bad-plugin' and 'scoregate-notes'",
        ),
    ],
    ids=[
        "takes-a-built-in-name",
        "fails-to-import",
        "lacks-members",
        "duplicate",
        "misnamed",
        "spec-says-no-scores",
        "track-takes-a-built-in-name",
        "track-is-not-a-track",
        "track-kind-takes-a-built-in-name",
        "two-tracks-bring-one-kind",
        "duplicate-track",
    ],
)
def test_a_broken_or_duplicate_plugin_is_one_clear_error_naming_its_package(
    points: dict[str, dict[str, str]],
    modules: dict[str, str],
    said: str,
    notes_package: Path,
    project: Path,
    tmp_path: Path,
) -> None:
    bad = install(package(tmp_path / "sources", "bad-plugin", points, modules), tmp_path / "bad-plugin")

    for args in (["validate"], ["run", "calm", "--no-mlflow"]):
        refused = scoregate(args, project, bad, notes_package)

        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "Traceback" not in refused.stderr
        assert " ".join(refused.stderr.split()).startswith(f"error: {said}"), refused.stderr
    assert not (project / "runs").exists()  # refused before the run started


HELLO = '''
import typer


def hello(name: str = "you") -> None:
    """Say hello from a plug-in package."""
    typer.echo(f"hello {name}, from a plug-in")
'''


def test_a_plugin_command_is_listed_by_help_and_runs(tmp_path: Path) -> None:
    points = {"scoregate.commands": {"hello": "hello_plugin.cmd:hello"}}
    hello = install(package(tmp_path / "sources", "hello-plugin", points, {"cmd.py": HELLO}), tmp_path / "hello")

    shown = scoregate(["--help"], tmp_path, hello)
    said = scoregate(["hello", "--name", "Ada"], tmp_path, hello)

    assert shown.returncode == 0, shown.stderr
    assert "  hello            Say hello from a plug-in package." in shown.stdout
    assert "  hello-plugin  command hello" in shown.stdout
    assert said.returncode == 0, said.stderr
    assert said.stdout == "hello Ada, from a plug-in\n"


def test_a_plugin_command_cannot_take_a_built_in_command_name(tmp_path: Path) -> None:
    points = {"scoregate.commands": {"run": "hello_plugin.cmd:hello"}}
    hello = install(package(tmp_path / "sources", "hello-plugin", points, {"cmd.py": HELLO}), tmp_path / "hello")

    refused = scoregate(["runs", "list"], tmp_path, hello)

    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert " ".join(refused.stderr.split()).startswith(
        "error: plug-in command 'run' of the package 'hello-plugin' takes the name of scoregate's built-in command"
    )


def test_a_plugin_provider_serves_a_model(project: Path, notes_package: Path, tmp_path: Path) -> None:
    points = {"scoregate.providers": {"canned": "scoregate.providers.scripted:ScriptedProvider"}}
    canned = install(package(tmp_path / "sources", "canned-plugin", points, {}), tmp_path / "canned")
    config = project / "scoregate.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("provider: scripted", "provider: canned"), "utf-8")

    ran = scoregate(["run", "calm", "--no-mlflow"], project, canned, notes_package)
    refused = scoregate(["validate"], project, notes_package)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "models.canned.provider: no provider 'canned'" in " ".join(refused.stdout.split() + refused.stderr.split())


def test_a_plugin_provider_that_leaves_a_method_out_is_refused(project: Path, tmp_path: Path) -> None:
    half = "from scoregate.providers.base import Provider\n\n\nclass HalfProvider(Provider):\n    pass\n"
    points = {"scoregate.providers": {"half": "half_plugin.provider:HalfProvider"}}
    plugin = install(package(tmp_path / "sources", "half-plugin", points, {"provider.py": half}), tmp_path / "half")

    refused = scoregate(["validate"], project, plugin)

    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert " ".join(refused.stderr.split()).startswith(
        "error: plug-in provider 'half' of the package 'half-plugin' (scoregate.providers: half = "
        "half_plugin.provider:HalfProvider) does not implement aclose, complete"
    )
