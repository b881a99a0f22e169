"""A run's description, built once from its manifest and summary, in two renderings: a paragraph (Langfuse's
dataset-run description) and markdown (MLflow's `mlflow.note.content`, shown on the run page).

Both say the same facts: experiment, dataset, model (its name in scoregate.yaml and the provider's id), prompt
versions, verdict and the gates that did not pass; the markdown adds the gate table and the primary metrics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoregate.store.identity import prompt_versions
from scoregate.support.numbers import fmt

if TYPE_CHECKING:
    from scoregate.store.record import DatasetReceipt, GateResult, Manifest, ModelReceipt, RunSummary

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


def primary_metrics(summary: RunSummary) -> list[str]:
    """The scores a person looks at first: those the gates judge (in gate order), then the other numeric scores."""
    scores = summary.scores
    gated = [g.metric for g in summary.gates if g.metric in scores]
    numeric = [k for k, s in scores.items() if s.data_type in ("numeric", "boolean")]
    return list(dict.fromkeys([*gated, *numeric]))


class _Absent:
    """What a missing receipt reads as: every field None."""

    def __getattr__(self, name: str) -> None:
        return None


@dataclass(frozen=True)
class RunDescription:
    """What describes a run, read once from its manifest (and summary, once it has one)."""

    manifest: Manifest
    summary: RunSummary | None = None

    @property
    def _model(self) -> ModelReceipt | _Absent:
        return self.manifest.receipts.model or _Absent()

    @property
    def _dataset(self) -> DatasetReceipt | _Absent:
        return self.manifest.receipts.dataset or _Absent()

    def _broken_gates(self) -> list[GateResult]:
        return [g for g in (self.summary.gates if self.summary else []) if g.status != "pass" or g.quarantined]

    def paragraph(self) -> str:
        """Return the description in words: experiment, dataset, model (name and id), prompts, verdict, gates."""
        model, dataset, receipts = self._model, self._dataset, self.manifest.receipts
        text = (
            f"scoregate run {self.manifest.run_id}: experiment {receipts.experiment} on "
            f"{dataset.name} ({dataset.items} items); model {model.name} "
            f"({model.model} @ {model.endpoint}); "
            f"prompts {prompt_versions(receipts.prompt_versions())}"
        )
        if self.summary is not None:
            text += f"; verdict {str(self.summary.verdict).replace('_', ' ')}"
            for g in self._broken_gates():
                text += f"\n- gate {g.name} {g.verdict_words()}: {g.detail}"
        return text

    def markdown(self) -> str:
        """Return the markdown description: header, verdict, gates, primary metrics, run metrics."""
        summary = self.summary
        experiment, verdict = (summary.experiment, summary.verdict) if summary else (None, None)
        model, dataset = self._model, self._dataset
        prompts = ", ".join(f"`{n}@{v}`" for n, v in self.manifest.receipts.prompt_versions().items())
        lines = [
            f"### {experiment} · {model.name} (`{model.model}`)",
            "",
            VERDICT_WORDS.get(str(verdict), str(verdict)),
            "",
            f"dataset `{dataset.name}` ({dataset.items} items, "
            f"hash `{str(dataset.content_hash)[:12]}`)"
            f" · prompts {prompts or '—'} · run `{self.manifest.run_id}`",
        ]
        lines += self._gate_lines() + self._score_lines() + self._run_metric_lines()
        text = "\n".join(lines)
        return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 40] + "\n\n… (cut; see summary.json)"

    def _gate_lines(self) -> list[str]:
        gates = self.summary.gates if self.summary else []
        if not gates:
            return []
        lines = ["", "| gate | rule | observed | coverage | status |", "|---|---|---|---|---|"]
        for g in gates:
            rule = f"{g.stat}({g.metric}) {g.op} {fmt(g.threshold)}"
            coverage = "—" if g.coverage is None else f"{g.coverage:.0%}"
            status = g.verdict_words(upper=True)
            lines.append(f"| {_cell(g.name)} | `{_cell(rule)}` | {fmt(g.observed)} | {coverage} | **{status}** |")
        broken = [g for g in self._broken_gates() if g.detail]
        if broken:
            lines.append("")
            lines += [f"- gate {g.name} {g.verdict_words()}: {g.detail}" for g in broken]
        return lines

    def _score_lines(self) -> list[str]:
        if self.summary is None:
            return []
        scores = self.summary.scores
        primary = primary_metrics(self.summary)
        if not primary:
            return []
        lines = ["", "| score | mean | 95% CI | measured |", "|---|---|---|---|"]
        for key in primary[:PRIMARY_SHOWN]:
            s = scores[key]
            ci = "—" if s.ci_low is None else f"[{fmt(s.ci_low)}, {fmt(s.ci_high)}]"
            lines.append(f"| {_cell(key)} | {fmt(s.mean)} | {ci} | {s.n_measured}/{s.n_total} |")
        if len(primary) > PRIMARY_SHOWN:
            lines.append(f"\n{len(primary) - PRIMARY_SHOWN} more score(s) in the metrics and in `summary.json`.")
        return lines

    def _run_metric_lines(self) -> list[str]:
        from scoregate.store.record import RunMetrics

        m = self.summary.run_metrics if self.summary else RunMetrics()
        cost = m.value("cost_usd_total")
        price = "unknown" if cost is None else f"${cost:.4f}"
        return [
            "",
            f"items {m.value('items')} · failed {m.value('error_count')} · latency p50/p95 "
            f"{fmt(m.value('latency_p50_ms'))}/{fmt(m.value('latency_p95_ms'))} ms · cost {price}",
            "",
            "The whole run: artifact `report.html` (opens in the browser), `summary.json`, `results.jsonl`.",
        ]
