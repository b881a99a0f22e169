"""Output read in CI logs, in this process: wrapped lines break only between units, continuations are indented,
and a console follows COLUMNS. The real executable at COLUMNS=80 is in tests/e2e/test_narrow_output_processes.py."""

from __future__ import annotations

import pytest

from scoregate.store.record import RunSummary


def test_wrapped_lines_break_only_between_units_and_indent_what_follows() -> None:
    from scoregate.cli.layout import join_units, keep, wrap

    fields = ["items 3", "success 100%", "latency p50/p95 6.4 ms/39 ms", "tokens in/out 4910/290", "cost $0.0000"]
    lines = wrap(join_units(fields), 40)
    assert lines == [
        "items 3  success 100%",
        "  latency p50/p95 6.4 ms/39 ms",
        "  tokens in/out 4910/290  cost $0.0000",
    ]
    command = wrap("mlflow: run 0123456789abcdef0123456789abcdef  (browse with `make mlflow-ui`)", 60)
    assert command == ["mlflow: run 0123456789abcdef0123456789abcdef  (browse with", "  `make mlflow-ui`)"]
    assert wrap(f"a {keep('b c d')} e", 4, first="> ", indent="    ") == ["> a", "    b c d", "    e"]  # whole


def test_print_summary_indents_every_continuation_at_80_columns() -> None:
    import io

    from rich.console import Console

    from scoregate.cli.render import print_summary

    reasons = {"the judge's answer did not match the schema (missing field score)": 2, "timed out after 3 s": 1}
    score = {"data_type": "numeric", "mean": None, "n_measured": 0, "n_total": 3, "null_reasons": reasons}
    metrics = {"items": 3, "success_rate": 1.0, "latency_p50_ms": 850.0, "latency_p95_ms": 1200.0,
               "tokens_in_total": 9035, "tokens_out_total": 1278, "cost_usd_total": 0.0123,
               "retries_total": 0}  # fmt: skip
    summary = {"run_id": "r", "model": "a-model-with-a-long-name", "dataset": "smoke_v1", "gates": [],
               "prompts": {"summarization-catchup": "local-e75f6452", "summarization-howto": "local-86aff890"},
               "scores": {"faithfulness_score": score}, "run_metrics": metrics, "verdict": "no_gates"}  # fmt: skip
    console = Console(file=io.StringIO(), width=80, color_system=None, force_terminal=False)

    print_summary(console, RunSummary.model_validate(summary))

    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    reason_at = lines.index("not measured because:")
    assert lines[reason_at + 1].startswith("  faithfulness_score: ")
    assert lines[reason_at + 2].startswith("    ") and "(1)" in "".join(lines[reason_at + 1 : reason_at + 4])
    assert lines[1].startswith("  summarization-howto@local-86aff890  on smoke_v1")  # the header, wrapped
    metric_lines = [line for line in lines if "cost $0.0123" in line or line.startswith("items 3  ")]
    assert len(metric_lines) == 2 and metric_lines[1].startswith("  ")
    assert all(len(line.rstrip()) <= 80 for line in lines)


def test_a_console_made_at_one_width_follows_columns_when_a_later_command_sets_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scoregate.support.console import lazy_console

    console = lazy_console()
    monkeypatch.setenv("COLUMNS", "250")
    assert console.width == 250
    monkeypatch.setenv("COLUMNS", "80")  # a second command in the same process (a test, a Python caller)
    assert console.width == 80
