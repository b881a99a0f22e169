"""`scoregate calibrate`: judge vs human agreement from score files (real SummEval and UniEval data) and from runs."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from scoregate.app.calibration_runs import calibration_status
from scoregate.tracks.project import load_project
from support.calibration_replies import script_replies, smoke_titles
from support.gold_run import GOLD_JUDGE, gold_items, gold_run  # noqa: F401
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Cli = Callable[..., CliResult]
DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SUMMEVAL_ROUGE = DATA / "summeval" / "summeval_rouge_scores.jsonl"
QAGS_CNNDM = DATA / "unieval" / "unieval_predict" / "fact" / "qags_cnndm_result.json"
TOPICAL_CHAT = DATA / "unieval" / "unieval_predict" / "dialogue" / "topical_chat_result.json"
needs_data = pytest.mark.skipif(
    not (SUMMEVAL_ROUGE.is_file() and QAGS_CNNDM.is_file() and TOPICAL_CHAT.is_file()),
    reason=f"the SummEval / UniEval data is not in {DATA} (see ../shared/data/README.md)",
)


def as_json(result: CliResult) -> dict[str, Any]:
    """Parse a `--json` command's output."""
    assert result.code == 0, result.output
    return dict(json.loads(result.out))


def per_document_mean(judge: list[float], human: list[float], docs: list[Any], corr: Callable[..., Any]) -> float:
    """Average of a correlation within each document, skipping documents where either side is constant."""
    values = []
    for doc in dict.fromkeys(docs):
        rows = [i for i, d in enumerate(docs) if d == doc]
        j, h = np.asarray(judge)[rows], np.asarray(human)[rows]
        if len(rows) >= 2 and np.ptp(j) > 0 and np.ptp(h) > 0:
            values.append(corr(j, h).statistic)
    return float(np.mean(values))


def hand_qwk(a: list[int], b: list[int], low: int, high: int) -> float:
    """Cohen's kappa with quadratic weights, from its definition."""
    k, n = high - low + 1, len(a)
    observed = [[0.0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        observed[x - low][y - low] += 1 / n
    rows = [sum(observed[i]) for i in range(k)]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    disagree = sum((i - j) ** 2 * observed[i][j] for i in range(k) for j in range(k))
    chance = sum((i - j) ** 2 * rows[i] * cols[j] for i in range(k) for j in range(k))
    return 1 - disagree / chance


# ---------------------------------------------------------------- any file of scores, on real data


@needs_data
def test_summeval_rouge_vs_experts_matches_scipy_and_the_g_eval_paper(scoregate: Cli) -> None:
    rows = [json.loads(line) for line in SUMMEVAL_ROUGE.read_text(encoding="utf-8").splitlines()]
    judge, human = [r["rouge1"] for r in rows], [r["human"]["relevance"] for r in rows]
    docs = [r["doc_id"] for r in rows]
    data = as_json(
        scoregate(
            "calibrate", "--file", str(SUMMEVAL_ROUGE), "--judge-key", "rouge1", "--human-key", "human.relevance",
            "--document-key", "doc_id", "--resamples", "200", "--json",
        )
    )  # fmt: skip
    assert (data["n_total"], data["n_pairs"]) == (1600, 1600)
    pooled, per_doc = data["pooled"], data["per_document"]
    assert pooled["spearman"]["value"] == pytest.approx(stats.spearmanr(judge, human).statistic, abs=1e-9)
    assert pooled["kendall"]["value"] == pytest.approx(stats.kendalltau(judge, human).statistic, abs=1e-9)
    assert pooled["pearson"]["value"] == pytest.approx(stats.pearsonr(judge, human).statistic, abs=1e-9)
    assert pooled["mae"]["value"] == pytest.approx(np.mean(np.abs(np.subtract(judge, human))))
    assert pooled["spearman"]["ci_low"] < pooled["spearman"]["value"] < pooled["spearman"]["ci_high"]
    assert per_doc["spearman"]["value"] == pytest.approx(per_document_mean(judge, human, docs, stats.spearmanr))
    assert per_doc["kendall"]["value"] == pytest.approx(per_document_mean(judge, human, docs, stats.kendalltau))
    assert per_doc["documents_used"] == 100
    # G-Eval (Liu et al. 2023), Table 1, ROUGE-1 on relevance, summary-level: ρ 0.326, τ 0.252
    assert per_doc["spearman"]["value"] == pytest.approx(0.326, abs=0.005)
    assert per_doc["kendall"]["value"] == pytest.approx(0.252, abs=0.005)
    # ROUGE is not on the experts' 1-5 scale: no kappa or agreement without --scale, and it says so
    assert pooled["qwk"]["value"] is None and "scale" in pooled["qwk"]["reason"]


@needs_data
def test_csv_columns_and_documents_with_constant_ratings_are_skipped_per_document(
    scoregate: Cli, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in SUMMEVAL_ROUGE.read_text(encoding="utf-8").splitlines()]
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_doc.setdefault(r["doc_id"], []).append(r)
    constant = [d for d, rs in by_doc.items() if len({r["human"]["consistency"] for r in rs}) == 1]
    assert constant, "SummEval has articles whose 16 summaries all got the same consistency rating"
    chosen = constant + [d for d in by_doc if d not in constant][:20]
    subset = [r for d in chosen for r in by_doc[d]]
    path = tmp_path / "rouge_vs_consistency.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "system_id", "rouge2", "human.consistency"])
        writer.writerows([r["doc_id"], r["system_id"], r["rouge2"], r["human"]["consistency"]] for r in subset)
    judge, human = [r["rouge2"] for r in subset], [r["human"]["consistency"] for r in subset]
    docs = [r["doc_id"] for r in subset]

    data = as_json(
        scoregate(
            "calibrate", "--file", str(path), "--judge-key", "rouge2", "--human-key", "human.consistency",
            "--document-key", "doc_id", "--resamples", "200", "--json",
        )
    )  # fmt: skip
    per_doc = data["per_document"]
    assert (per_doc["documents_used"], per_doc["documents_skipped"]) == (20, len(constant))
    assert per_doc["pearson"]["value"] == pytest.approx(per_document_mean(judge, human, docs, stats.pearsonr))
    assert data["pooled"]["spearman"]["value"] == pytest.approx(stats.spearmanr(judge, human).statistic)


@needs_data
def test_unieval_predictions_read_by_nested_paths_reproduce_the_papers_qags_correlations(scoregate: Cli) -> None:
    records = json.loads(QAGS_CNNDM.read_text(encoding="utf-8"))
    judge = [r["predict_scores"]["consistency"] for r in records]
    human = [r["scores"]["consistency"] for r in records]
    result = scoregate(
        "calibrate", "--file", str(QAGS_CNNDM), "--judge-key", "predict_scores.consistency",
        "--human-key", "scores.consistency", "--resamples", "200", "--json",
    )  # fmt: skip
    pooled = as_json(result)["pooled"]
    assert pooled["pearson"]["value"] == pytest.approx(stats.pearsonr(judge, human).statistic)
    assert pooled["spearman"]["value"] == pytest.approx(stats.spearmanr(judge, human).statistic)
    assert pooled["kendall"]["value"] == pytest.approx(stats.kendalltau(judge, human).statistic)
    # UniEval (Zhong et al. 2022), QAGS-CNNDM: Pearson 0.682, Spearman 0.662, Kendall 0.532
    assert (pooled["pearson"]["value"], pooled["spearman"]["value"], pooled["kendall"]["value"]) == pytest.approx(
        (0.682, 0.662, 0.532), abs=0.0015
    )


@needs_data
def test_topical_chat_grouped_by_dialogue_context_prints_a_pooled_and_per_document_table(scoregate: Cli) -> None:
    records = json.loads(TOPICAL_CHAT.read_text(encoding="utf-8"))
    judge = [r["predict_scores"]["naturalness"] for r in records]
    human = [r["scores"]["naturalness"] for r in records]
    docs = [r["source"] for r in records]
    args = ["calibrate", "--file", str(TOPICAL_CHAT), "--judge-key", "predict_scores.naturalness"]
    args += ["--human-key", "scores.naturalness", "--document-key", "source", "--resamples", "200"]
    data = as_json(scoregate(*args, "--json"))
    assert data["per_document"]["documents_used"] + data["per_document"]["documents_skipped"] == 60
    assert data["per_document"]["spearman"]["value"] == pytest.approx(
        per_document_mean(judge, human, docs, stats.spearmanr)
    )
    shown = scoregate(*args)
    assert shown.code == 0, shown.output
    pooled = f"{stats.spearmanr(judge, human).statistic:.3f}"
    assert f"Spearman ρ │ {pooled} │" in shown.output
    assert "360 of 360 items paired" in shown.output
    assert "needs integer ratings: pass --scale LOW,HIGH" in shown.output


def test_kappa_agreement_and_mae_on_a_scale_match_hand_computed_values(scoregate: Cli, tmp_path: Path) -> None:
    judge = [1, 2, 3, 4, 5, 5, 3, 2, 4, 1]
    human = [1, 3, 3, 5, 5, 4, 2, 2, 4, None]
    path = tmp_path / "ratings.jsonl"
    records = [{"id": f"i{n}", "judge": j, "human": h} for n, (j, h) in enumerate(zip(judge, human, strict=True))]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    data = as_json(
        scoregate("calibrate", "--file", str(path), "--judge-key", "judge", "--human-key", "human",
                  "--scale", "1,5", "--resamples", "200", "--json")
    )  # fmt: skip
    j, h = judge[:9], [x for x in human if x is not None]
    assert (data["n_total"], data["n_pairs"], data["excluded"]) == (10, 9, {"no human score": 1})
    pooled = data["pooled"]
    assert pooled["qwk"]["value"] == pytest.approx(hand_qwk(j, h, 1, 5))
    assert pooled["exact"]["value"] == pytest.approx(5 / 9)
    assert pooled["within_one"]["value"] == pytest.approx(1.0)
    assert pooled["mae"]["value"] == pytest.approx(4 / 9)
    assert data["per_document"] is None


def test_a_bad_column_or_value_is_named_and_options_are_checked(scoregate: Cli, tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text('{"doc": "a", "j": 3, "h": 4}\n{"doc": "a", "j": "high", "h": 2}\n', encoding="utf-8")
    typo = scoregate("calibrate", "--file", str(path), "--judge-key", "judge", "--human-key", "h")
    assert typo.code == 1
    assert "no record has a value at 'judge'" in typo.output and "keys are: doc, j, h" in typo.output
    bad = scoregate("calibrate", "--file", str(path), "--judge-key", "j", "--human-key", "h")
    assert bad.code == 1 and f"{path}:2: j: 'high' is not a number" in bad.output
    both = scoregate("calibrate", "--file", str(path), "--run", "r1", "--judge-key", "j", "--human-key", "h")
    assert both.code == 2 and "either --run" in both.output
    save = scoregate("calibrate", "--file", str(path), "--judge-key", "j", "--human-key", "h", "--save")
    assert save.code == 2 and "use it with --run" in save.output
    scale = scoregate("calibrate", "--file", str(path), "--judge-key", "j", "--human-key", "h", "--scale", "5")
    assert scale.code == 1 and "--scale '5' is not two integers" in scale.output


# ---------------------------------------------------------------- scoregate runs


def test_a_gold_run_is_calibrated_against_metadata_human_with_the_judges_scale(
    scoregate: Cli,
    gold_run: str,  # noqa: F811
) -> None:
    items = gold_items()
    human = [item["metadata"]["human"]["actionability"] for item in items]
    judge = [GOLD_JUDGE[item["id"]] for item in items]
    args = ["calibrate", "--run", gold_run, "--judge-key", "actionability_score", "--human-key", "human_actionability"]
    data = as_json(scoregate(*args, "--json"))
    assert (data["n_pairs"], data["scale"]) == (6, [1, 5])  # the judge's range from its evaluator file
    pooled = data["pooled"]
    assert pooled["spearman"]["value"] == pytest.approx(stats.spearmanr(judge, human).statistic)
    assert pooled["kendall"]["value"] == pytest.approx(stats.kendalltau(judge, human).statistic)
    assert pooled["qwk"]["value"] == pytest.approx(hand_qwk(judge, human, 1, 5))
    assert pooled["exact"]["value"] == pytest.approx(np.mean(np.equal(judge, human)))

    faithful = scoregate("calibrate", "--run", gold_run, "--judge-key", "faithfulness_score",
                         "--human-key", "human_faithfulness")  # fmt: skip
    assert faithful.code == 0, faithful.output
    assert "human scores are constant: correlation is undefined" in faithful.output  # every gold summary got 5


def test_gold_ratings_pair_only_with_the_gold_summaries_they_rate(
    scoregate: Cli,
    scripted_server: ScriptedOpenAI,
    project_dir: Path,
    runs: Runs,
    gold_run: str,  # noqa: F811
) -> None:
    store = project_dir / "runs" / gold_run / "results.jsonl"
    lines = [json.loads(line) for line in store.read_text(encoding="utf-8").splitlines()]
    lines[0]["output"] = "A different summary of the episode."
    store.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    args = ["--judge-key", "actionability_score", "--human-key", "human_actionability"]
    data = as_json(scoregate("calibrate", "--run", gold_run, *args, "--json"))
    assert data["n_pairs"] == 5
    assert data["excluded"] == {"metadata.human rates the item's expected_output, and this run's output differs": 1}

    scripted_server.responder = scripted_server.default_reply  # the model writes its own summaries
    assert scoregate("run", "gold", "--no-mlflow", "--no-cache").code == 0
    own = scoregate("calibrate", "--run", runs.latest(), *args)
    assert own.code == 1
    assert "has a human 'human_actionability' rating" in own.output and "gold summaries" in own.output


def test_imported_feedback_is_averaged_over_raters_and_unrated_items_are_counted(
    scoregate: Cli, scripted_server: ScriptedOpenAI, project_dir: Path, runs: Runs
) -> None:
    script_replies(scripted_server, {}, dict(zip(smoke_titles(project_dir).values(), [2, 3, 4, 5, 3, 1], strict=True)))
    assert scoregate("run", "smoke", "--no-mlflow").code == 0
    run_id = runs.latest()
    stored = {r["item_id"]: r for r in runs.results(run_id)}
    ids = sorted(stored)
    ratings = [(ids[0], 2, "ana"), (ids[0], 3, "ben"), (ids[1], 4, "ana"), (ids[2], 5, "ana"), (ids[3], 3, "ana")]
    path = project_dir / "ratings.csv"
    path.write_text(
        "run_id,item_id,key,value,rater\n"
        + "".join(f"{run_id},{i},human_actionability,{v},{r}\n" for i, v, r in ratings),
        encoding="utf-8",
    )
    imported = scoregate("scores", "import", str(path), "--local-only")
    assert imported.code == 0, imported.output
    data = as_json(
        scoregate("calibrate", "--run", run_id, "--judge-key", "actionability_score",
                  "--human-key", "human_actionability", "--json")
    )  # fmt: skip
    human = {ids[0]: 2.5, ids[1]: 4.0, ids[2]: 5.0, ids[3]: 3.0}
    judge = {i: stored[i]["scores"] for i in human}
    judge_values = [next(s["value"] for s in judge[i] if s["name"] == "actionability_score") for i in human]
    assert data["n_pairs"] == 4 and sum(data["excluded"].values()) == len(ids) - 4
    assert data["pooled"]["pearson"]["value"] == pytest.approx(stats.pearsonr(judge_values, list(human.values()))[0])


def test_a_saved_calibration_gates_the_judge_until_it_changes(
    scoregate: Cli,
    gold_run: str,  # noqa: F811
    project_dir: Path,
    edit_yaml: Callable[..., None],
) -> None:
    args = ["calibrate", "--run", gold_run, "--judge-key", "actionability_score", "--human-key", "human_actionability"]
    saved = scoregate(*args, "--save")
    assert saved.code == 0, saved.output
    path = project_dir / "calibrations" / "ev_actionability_v1.json"
    assert f"saved {path}" in saved.output and "openai/scripted-1" in saved.output
    record = json.loads(path.read_text(encoding="utf-8"))["scores"]["actionability_score"]
    assert (record["version"], record["runs"], record["model"]["model"]) == (1, [gold_run], "scripted-1")
    spearman = record["metrics"]["pooled"]["spearman"]["value"]

    project = load_project(project_dir)
    assert calibration_status(project, "ev_actionability_v1", "scripted", floor=spearman - 0.01)[0] == "pass"
    status, detail = calibration_status(project, "ev_actionability_v1", "scripted", floor=spearman + 0.01)
    assert status == "fail" and f"spearman {spearman:.3f} <" in detail
    assert calibration_status(project, "ev_faithfulness_v1", "scripted", floor=0.1)[0] == "incomplete"

    def other_model(config: dict[str, Any]) -> None:
        config["models"]["bigger"] = {**config["models"]["scripted"], "model": "scripted-2"}

    edit_yaml(project_dir / "scoregate.yaml", other_model)
    status, detail = calibration_status(load_project(project_dir), "ev_actionability_v1", "bigger", floor=0.1)
    assert status == "incomplete" and "openai/scripted-2" in detail

    def new_rubric(spec: dict[str, Any]) -> None:
        spec["prompt"] = spec["prompt"].replace("Scale:", "Scale (be strict):")

    edit_yaml(project_dir / "evaluators" / "ev_actionability_v1.yaml", new_rubric)
    status, detail = calibration_status(load_project(project_dir), "ev_actionability_v1", "scripted", floor=0.1)
    assert status == "incomplete" and "prompt, rubric or settings changed" in detail
    refused = scoregate(*args, "--save")  # the run was scored by the judge as it was before the edit
    assert refused.code == 1 and "changed since run" in refused.output


def test_a_relative_file_is_read_from_the_project(
    scoregate: Cli, project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [{"j": j, "h": h} for j, h in ((1, 1), (2, 3), (3, 2), (4, 4))]
    (project_dir / "ratings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = scoregate("calibrate", "--file", "ratings.jsonl", "--judge-key", "j", "--human-key", "h", "--json")

    assert result.code == 0, result.output
    assert as_json(result)["n_pairs"] == 4
