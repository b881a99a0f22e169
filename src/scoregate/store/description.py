"""A run's description, built once from its manifest and summary, in two renderings: a paragraph (Langfuse's
dataset-run description) and markdown (MLflow's `mlflow.note.content`, shown on the run page).

Both say the same facts: experiment, dataset, model (its name in scoregate.yaml and the provider's id), prompt
versions, verdict and the gates that did not pass; the markdown adds the gate table and the primary metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoregate.store.identity import prompt_versions
from scoregate.support.numbers import fmt

VERDICT_WORDS = {
    "pass": "**PASS** — every gate passed",
    "fail": "**FAIL** — at least one gate failed",
    "incomplete": "**INCOMPLETE** — a gate could not be judged (a metric not measured, or coverage too low)",
    "no_gates": "**No gates** are set for this experiment",
}
MAX_CHARS = 7500
"""MLflow keeps tags up to 8,000 characters; the markdown stops before that."""
PRIMARY_SHOWN = 12


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def primary_metrics(summary: Mapping[str, Any]) -> list[str]:
    """The scores a person looks at first: those the gates judge (in gate order), then the other numeric scores."""
    scores = summary.get("scores") or {}
    gated = [g["metric"] for g in summary.get("gates") or [] if g.get("metric") in scores]
    numeric = [k for k, s in scores.items() if s.get("data_type") in ("numeric", "boolean")]
    return list(dict.fromkeys([*gated, *numeric]))


@dataclass(frozen=True)
class RunDescription:
    """What describes a run, read once from its manifest (and summary, once it has one)."""

    manifest: Mapping[str, Any]
    summary: Mapping[str, Any] | None = None

    @property
    def _receipts(self) -> Mapping[str, Any]:
        return self.manifest.get("receipts") or {}

    @property
    def _model(self) -> Mapping[str, Any]:
        return self._receipts.get("model") or {}

    @property
    def _dataset(self) -> Mapping[str, Any]:
        return self._receipts.get("dataset") or {}

    def _broken_gates(self) -> list[Mapping[str, Any]]:
        return [g for g in (self.summary or {}).get("gates") or [] if g.get("status") != "pass"]

    def paragraph(self) -> str:
        """Return the description in words: experiment, dataset, model (name and id), prompts, verdict, gates."""
        model, dataset = self._model, self._dataset
        text = (
            f"scoregate run {self.manifest.get('run_id')}: experiment {self._receipts.get('experiment')} on "
            f"{dataset.get('name')} ({dataset.get('items')} items); model {model.get('name')} "
            f"({model.get('model')} @ {model.get('endpoint')}); "
            f"prompts {prompt_versions(self._receipts.get('prompts') or {})}"
        )
        if self.summary is not None:
            text += f"; verdict {str(self.summary.get('verdict')).replace('_', ' ')}"
            for g in self._broken_gates():
                text += f"\n- gate {g['name']} {g['status']}: {g.get('detail')}"
        return text

    def markdown(self) -> str:
        """Return the markdown description: header, verdict, gates, primary metrics, run metrics."""
        summary = self.summary or {}
        model, dataset = self._model, self._dataset
        prompts = ", ".join(f"`{n}@{i.get('version')}`" for n, i in (self._receipts.get("prompts") or {}).items())
        lines = [
            f"### {summary.get('experiment')} · {model.get('name')} (`{model.get('model')}`)",
            "",
            VERDICT_WORDS.get(str(summary.get("verdict")), str(summary.get("verdict"))),
            "",
            f"dataset `{dataset.get('name')}` ({dataset.get('items')} items, "
            f"hash `{str(dataset.get('content_hash'))[:12]}`)"
            f" · prompts {prompts or '—'} · run `{self.manifest.get('run_id')}`",
        ]
        lines += self._gate_lines() + self._score_lines() + self._run_metric_lines()
        text = "\n".join(lines)
        return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 40] + "\n\n… (cut; see summary.json)"

    def _gate_lines(self) -> list[str]:
        gates = (self.summary or {}).get("gates") or []
        if not gates:
            return []
        lines = ["", "| gate | rule | observed | coverage | status |", "|---|---|---|---|---|"]
        for g in gates:
            rule = f"{g['stat']}({g['metric']}) {g['op']} {fmt(g['threshold'])}"
            coverage = "—" if g.get("coverage") is None else f"{g['coverage']:.0%}"
            status = g["status"].upper()
            lines.append(f"| {_cell(g['name'])} | `{_cell(rule)}` | {fmt(g['observed'])} | {coverage} | **{status}** |")
        broken = [g for g in self._broken_gates() if g.get("detail")]
        if broken:
            lines.append("")
            lines += [f"- gate {g['name']} {g['status']}: {g['detail']}" for g in broken]
        return lines

    def _score_lines(self) -> list[str]:
        summary = self.summary or {}
        scores = summary.get("scores") or {}
        primary = primary_metrics(summary)
        if not primary:
            return []
        lines = ["", "| score | mean | 95% CI | measured |", "|---|---|---|---|"]
        for key in primary[:PRIMARY_SHOWN]:
            s = scores[key]
            ci = "—" if s.get("ci_low") is None else f"[{fmt(s['ci_low'])}, {fmt(s['ci_high'])}]"
            lines.append(f"| {_cell(key)} | {fmt(s.get('mean'))} | {ci} | {s.get('n_measured')}/{s.get('n_total')} |")
        if len(primary) > PRIMARY_SHOWN:
            lines.append(f"\n{len(primary) - PRIMARY_SHOWN} more score(s) in the metrics and in `summary.json`.")
        return lines

    def _run_metric_lines(self) -> list[str]:
        m = (self.summary or {}).get("run_metrics") or {}
        cost = m.get("cost_usd_total")
        return [
            "",
            f"items {m.get('items')} · failed {m.get('error_count')} · latency p50/p95 {fmt(m.get('latency_p50_ms'))}/"
            f"{fmt(m.get('latency_p95_ms'))} ms · cost {'unknown' if cost is None else f'${cost:.4f}'}",
            "",
            "The whole run: artifact `report.html` (opens in the browser), `summary.json`, `results.jsonl`.",
        ]
