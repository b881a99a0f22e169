"""A new track is one folder and one line in `tracks/listing.py`: the throwaway `brevity` track, from run to MLflow
and ranking, and its command in `scoregate --help`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoregate.analysis.model_ranking import rank_runs
from scoregate.app.run.experiment import RunOptions, run_experiment
from scoregate.catalog.directions import project_directions
from scoregate.errors import ValidationFailed
from scoregate.sinks.mlflow.readable import readable_metrics
from scoregate.tracks import listing, registry
from scoregate.tracks.project import load_project
from support.projects import copy_shipped, write_yaml
from support.scripted_openai import ScriptedOpenAI

REPO = Path(__file__).resolve().parents[2]
NO_MIRRORS = RunOptions(
    selection=RunOptions.Selection(limit=3),
    mirrors=RunOptions.Mirrors(off=frozenset({"mlflow", "langfuse"})),
    use_cache=False,
)


@pytest.fixture
def brevity_project(tmp_path: Path, scripted_server: ScriptedOpenAI) -> Path:
    """Three support calls summarised by the scripted model, scored by `kind: brevity` and gated on its run value."""
    root = tmp_path / "project"
    (root / "datasets").mkdir(parents=True)
    rows = (REPO / "datasets" / "support_calls_v1.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    (root / "datasets" / "support_calls_v1.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    copy_shipped(root, {"prompts": ["call-summary.yaml"]})
    (root / "evaluators").mkdir()
    write_yaml(root / "evaluators" / "brief_v1.yaml", {"kind": "brevity", "name": "brief_v1", "version": 1})
    write_yaml(
        root / "scoregate.yaml",
        {
            "project": "track-plugin",
            "settings": {"model": "scripted", "concurrency": 1, "bootstrap_resamples": 200},
            "models": {"scripted": {"provider": "openai", "model": "scripted-1", "base_url": scripted_server.url}},
            "experiments": {
                "brief": {
                    "dataset": "support_calls_v1",
                    "prompt": "call-summary",
                    "evaluators": ["brief_v1"],
                    "gates": ["brief"],
                }
            },
            "gates": [{"name": "brief", "metric": "words_per_reply_run", "op": "<=", "threshold": 4}],
        },
    )
    return root


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The track's one registry line, added for this test only."""
    monkeypatch.setattr(listing, "TRACK_PACKAGES", [*listing.TRACK_PACKAGES, "support.plugin_track_brevity"])
    registry.evaluator_kinds.cache_clear()
    yield
    registry.evaluator_kinds.cache_clear()


def test_a_track_added_by_one_line_has_its_block_gate_mlflow_metrics_and_ranking(
    brevity_project: Path, scripted_server: ScriptedOpenAI, registered: None
) -> None:
    replies = iter(["Refund sent.", "Refund sent, invoice fixed.", "Refund sent.", "A much longer reply " * 3] * 3)
    scripted_server.responder = lambda body: next(replies)

    short = run_experiment(brevity_project, "brief", NO_MIRRORS)
    long = run_experiment(brevity_project, "brief", NO_MIRRORS)

    assert short.summary["brevity"]["metrics"] == {"words_per_reply": pytest.approx(8 / 3)}
    (gate,) = short.summary["gates"]
    assert (gate["name"], gate["observed"], gate["status"]) == ("brief", pytest.approx(8 / 3), "pass")
    assert long.summary["gates"][0]["status"] == "fail"
    summary = short.store.summary_record
    assert summary is not None and readable_metrics(summary)["brevity_words_per_reply"] == pytest.approx(2.667)
    directions = project_directions(load_project(brevity_project))
    ranking = rank_runs(
        [short.store, long.store], metric="reply_words", directions=directions, tracks=registry.ranked_metrics()
    )
    best = ranking.best_by_metric["brevity.words_per_reply"]
    assert best["higher_is_better"] is False and best["value"] == pytest.approx(8 / 3)
    assert ranking.runs[0].run_id == short.run_id


def test_without_its_registry_line_the_track_has_no_block_and_its_kind_is_unknown(brevity_project: Path) -> None:
    registry.evaluator_kinds.cache_clear()
    with pytest.raises(ValidationFailed, match="'brevity' found using 'kind' does not match any of the expected tags"):
        load_project(brevity_project)


def _scoregate_with_brevity(*args: str) -> subprocess.CompletedProcess[str]:
    """The `scoregate` command with the brevity track's one line added to `tracks/listing.py`."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO / 'tests')!r})\n"
        "from scoregate.tracks import listing\n"
        "listing.TRACK_PACKAGES.append('support.plugin_track_brevity')\n"
        "from scoregate.cli import main\n"
        f"sys.argv = ['scoregate', *{list(args)!r}]\n"
        "main()"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_a_track_command_is_listed_from_its_folder_and_runs() -> None:
    listed = _scoregate_with_brevity("--help")
    ran = _scoregate_with_brevity("brevity", "Refund sent, invoice fixed.")

    assert listed.returncode == 0, listed.stderr
    assert "brevity" in listed.stdout and "Count the words of a reply" in listed.stdout
    assert (ran.returncode, ran.stdout) == (0, "4 words\n"), ran.stderr


def test_the_shipped_tracks_commands_come_from_their_folders() -> None:
    from scoregate.cli.commands import COMMANDS

    assert {name: COMMANDS[name].module for name in ("extraction", "connection-test", "gold")} == {
        "extraction": "scoregate.tracks.extraction.cli",
        "connection-test": "scoregate.tracks.extraction.cli",
        "gold": "scoregate.tracks.tags.cli",
    }


def test_a_track_command_cannot_take_a_built_in_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import scoregate.cli.commands as cli

    built_in = {"run": cli.LazyCommand("scoregate.cli.run_cmd", "run", "Run."), "runs": cli.COMMANDS["runs"]}
    offered = {"run": ("plugin.cli", "run", "Mine."), "words": ("plugin.cli", "words", "Count.")}
    monkeypatch.setattr(cli, "track_commands", lambda: offered)

    commands = cli._with_track_commands(built_in, after="run")

    assert list(commands) == ["run", "words", "runs"]
    assert commands["run"].module == "scoregate.cli.run_cmd" and commands["words"].module == "plugin.cli"
