"""Output read in CI logs, at 80 and 40 columns, stdout a pipe: identifiers whole, bullets with their text, data inert.

The real `scoregate` executable runs in a project under a deep folder, so every path is wider than a narrow
line. A path, a `file:line`, an id, a key or a command in backticks must appear whole on one line (it may
overflow); a bullet never stands alone; continuation lines are indented; text from a dataset, a model or a
server never reaches the terminal as control sequences, markup or emoji codes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.fake_langfuse import FakeLangfuse
from support.langfuse_env import langfuse_env_fixture  # noqa: F401
from support.projects import SCOREGATE_BIN, Runs
from support.scripted_openai import PREFLIGHT, ScriptedOpenAI

WIDTHS = (80, 40)
BULLETS = {"-", "*", "+", "•", "→", "error:", "warning:"}
HOSTILE = "\x1b]0;pwned\x07\x1b[31mRED\x1b[0m :smile: [bold]b[/bold] \x9b2J"
"""An OSC window title, a colour, an emoji code, rich markup and a C1 CSI (erase display)."""


def scoregate_at(width: int, root: Path, *args: str) -> tuple[int, str]:
    """Run the real executable with COLUMNS=`width` and no TTY; return the exit code and stdout + stderr."""
    env = {**os.environ, "COLUMNS": str(width)}
    env.pop("LINES", None)
    done = subprocess.run(
        [str(SCOREGATE_BIN), *args, "-C", str(root)],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done.returncode, done.stdout + done.stderr


def whole(out: str, token: str) -> bool:
    """True when `token` appears unbroken on one line of `out`."""
    return any(token in line for line in out.splitlines())


def assert_laid_out(out: str, tokens: list[str]) -> None:
    """Every token whole on a line; no bullet or label alone on its line; no control character but newline."""
    broken = [token for token in tokens if not whole(out, token)]
    assert broken == [], out
    orphans = [line for line in out.splitlines() if line.strip() in BULLETS]
    assert orphans == [], out
    controls = sorted({hex(ord(c)) for c in out if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F})
    assert controls == [], out


def commands(out: str) -> list[str]:
    """Every command in backticks, as printed once whitespace is collapsed (a split one reads the same there)."""
    return re.findall(r"`[^`]+`", " ".join(out.split()))


@pytest.fixture
def deep(project_dir: Path, tmp_path: Path) -> Path:
    """The test project copied under a folder path longer than 80 columns."""
    root = tmp_path.joinpath(*["a-rather-long-folder-name-for-paths"] * 3, "project")
    shutil.copytree(project_dir, root)
    assert len(str(root)) > 100
    return root


def break_files(root: Path) -> None:
    """A line without `input`, a line that is not UTF-8, and a prompt whose placeholder no item fills."""
    path = root / "datasets" / "smoke_v1.jsonl"
    lines = path.read_bytes().splitlines()
    item = json.loads(lines[1])
    del item["input"]
    lines[1] = json.dumps(item).encode()
    lines[3] = lines[3].replace(b'"id"', b'"\xff\xfeid"', 1)
    path.write_bytes(b"\n".join(lines) + b"\n")
    prompt = root / "prompts" / "summarization-howto.yaml"
    prompt.write_text(prompt.read_text(encoding="utf-8").replace("{{transcript}}", "{{transcrpt}}"), encoding="utf-8")


@pytest.mark.parametrize("width", WIDTHS)
def test_validate_errors_keep_every_path_and_line_whole(deep: Path, width: int) -> None:
    break_files(deep)

    code, out = scoregate_at(width, deep, "validate")

    assert code == 1, out
    dataset = str(deep / "datasets" / "smoke_v1.jsonl")
    assert_laid_out(out, [f"{dataset}:2:", f"{dataset}:4:", "prompts/summarization-howto.yaml", "{{transcrpt}}"])
    lines = out.splitlines()
    assert lines[0].startswith("error: ") and all(line.startswith("  ") for line in lines[1:]), out
    for line in lines:
        if line.lstrip().startswith("- "):
            assert line.startswith("  - /"), line  # the bullet and its path start one line
    problem_lines = [line for line in lines[1:] if not line.startswith("  - ") and not line.startswith("  → ")]
    assert all(line.startswith("    ") for line in problem_lines), out  # a problem's continuation is indented


@pytest.mark.parametrize("width", WIDTHS)
def test_a_file_error_and_its_hint_keep_the_path_and_the_command_whole(deep: Path, width: int) -> None:
    prompt = deep / "prompts" / "summarization-catchup.yaml"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "name: x\n  broken: [\n", encoding="utf-8")

    code, out = scoregate_at(width, deep, "validate")

    assert code == 1, out
    line_no = len(prompt.read_text(encoding="utf-8").splitlines())
    assert_laid_out(out, [f"{prompt}:{line_no}:", "`scoregate validate`"])
    hint = next(line for line in out.splitlines() if line.startswith("  → "))
    assert hint.startswith("  → fix"), out
    assert all(line.startswith(("error: ", "  ")) for line in out.splitlines()), out


@pytest.mark.parametrize("width", WIDTHS)
def test_a_run_error_keeps_the_url_and_the_model_name_whole(
    deep: Path, width: int, scripted_server: ScriptedOpenAI
) -> None:
    scripted_server.fail_next(401, times=5, path=PREFLIGHT)

    code, out = scoregate_at(width, deep, "run", "counters", "--no-mlflow", "--no-langfuse")

    assert code == 1, out
    assert_laid_out(out, [scripted_server.url, *commands(out)])
    first = next(i for i, line in enumerate(out.splitlines()) if line.startswith("error: "))
    assert all(line.startswith("  ") for line in out.splitlines()[first + 1 :]), out


@pytest.mark.parametrize("width", WIDTHS)
def test_run_output_with_a_failed_item_and_hostile_text_is_whole_inert_and_says_the_reason_once(
    deep: Path, width: int, scripted_server: ScriptedOpenAI
) -> None:
    task = scripted_server.default_reply
    scripted_server.responder = lambda body: (
        task(body) if "strict, careful evaluator" in json.dumps(body) else f"{HOSTILE}\n{task(body)}"
    )
    scripted_server.fail_next(400, body=f'{{"error": {{"message": "bad request {HOSTILE}"}}}}')  # raw, as echoed

    code, out = scoregate_at(width, deep, "run", "smoke", "--no-mlflow", "--no-langfuse")

    assert code == 0, out
    runs = Runs(deep)
    run_id = runs.latest()
    summary = runs.summary(run_id)
    retry = f"`scoregate run --resume {run_id} --retry-errors`"
    assert_laid_out(out, [run_id, str(deep / "runs" / run_id), retry, *summary["scores"], scripted_server.url])
    assert "bad request \\x1b]0;pwned\\x07\\x1b[31mRED\\x1b[0m :smile: [bold]b[/bold] \\x9b2J" in " ".join(out.split())
    assert "😄" not in out
    words = " ".join(out.split())
    assert words.count("bad request") == 1, out  # one failed item: its reason said once, not under every score
    assert "every score" in words


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_show_its_items_and_one_item_print_data_as_text(
    deep: Path, width: int, scripted_server: ScriptedOpenAI
) -> None:
    task = scripted_server.default_reply
    scripted_server.responder = lambda body: (
        task(body) if "strict, careful evaluator" in json.dumps(body) else f"{HOSTILE}\n{task(body)}"
    )
    assert scoregate_at(250, deep, "run", "counters", "--limit", "2", "--no-mlflow", "--no-langfuse")[0] == 0
    runs = Runs(deep)
    run_id = runs.latest()
    keys = [k for k, s in runs.summary(run_id)["scores"].items() if s["data_type"] in ("numeric", "boolean")]

    for args in (["runs", "show", run_id], ["runs", "show", run_id, "--items"]):
        code, out = scoregate_at(width, deep, *args)
        assert code == 0, out
        assert_laid_out(out, [run_id, *keys])
        assert "😄" not in out
        assert ":smile:" in out or "--items" not in args  # the output excerpt, its code shown as typed
    code, out = scoregate_at(width, deep, "runs", "list")
    assert code == 0 and "…" not in out, out
    assert_laid_out(out, [run_id])
    code, out = scoregate_at(width, deep, "runs", "show", run_id, "--item", "smoke-001")
    assert code == 0, out
    assert_laid_out(out, [run_id, "smoke-001", "\\x1b]0;pwned\\x07\\x1b[31mRED\\x1b[0m", ":smile:", "[bold]b[/bold]"])
    assert "\\x9b2J" in out and "😄" not in out


def test_compare_warnings_and_hints_keep_ids_and_commands_whole(deep: Path, scripted_server: ScriptedOpenAI) -> None:
    for experiment in ("counters", "smoke"):
        assert scoregate_at(250, deep, "run", experiment, "--limit", "2", "--no-mlflow", "--no-langfuse")[0] == 0
    a, b = Runs(deep).ids()[-2:]
    for width in WIDTHS:
        code, out = scoregate_at(width, deep, "compare", a, b, "--no-mlflow")
        assert code == 0, out
        assert "warning: the runs used different evaluator versions" in " ".join(out.split())
        assert_laid_out(out, [a, b, str(deep / "runs"), *commands(out)])
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("warning: the runs used"))
        end = next(i for i in range(start, len(lines)) if "the evaluators" in lines[i])
        assert all(line.startswith("  ") for line in lines[start + 1 : end + 1]), out  # its continuations indented


@pytest.mark.parametrize("width", WIDTHS)
def test_langfuse_check_and_sync_outputs_keep_urls_names_and_commands_whole(
    deep: Path, width: int, langfuse_env: FakeLangfuse
) -> None:
    code, out = scoregate_at(width, deep, "langfuse", "check")
    assert code == 0, out
    assert_laid_out(out, [langfuse_env.base_url, "Langfuse OK:"])

    for args in (["datasets", "sync", "--dry-run"], ["prompts", "sync", "--dry-run"], ["datasets", "sync"]):
        code, out = scoregate_at(width, deep, *args)
        assert code == 0, out
        names = ["smoke_v1"] if args[0] == "datasets" else ["summarization-catchup", "summarization-howto"]
        assert_laid_out(out, [langfuse_env.base_url, *names, *commands(out)])
        assert "…" not in out, out  # no name or number cut short to fit a column


@pytest.mark.parametrize("width", WIDTHS)
def test_a_project_path_with_spaces_stays_whole(project_dir: Path, tmp_path: Path, width: int) -> None:
    root = tmp_path / "My Projects" / "podcast summaries, take two" / "project"
    shutil.copytree(project_dir, root)
    break_files(root)

    code, out = scoregate_at(width, root, "validate")

    assert code == 1, out
    assert_laid_out(out, [f"{root / 'datasets' / 'smoke_v1.jsonl'}:2:", f"{root / 'datasets' / 'smoke_v1.jsonl'}:4:"])


@pytest.mark.parametrize("width", WIDTHS)
def test_what_a_run_says_before_its_items_fits_the_width(
    deep: Path, width: int, scripted_server: ScriptedOpenAI
) -> None:
    env = {**os.environ, "COLUMNS": str(width)}
    args = ["run", "counters", "--no-mlflow", "--no-langfuse", "--budget-minutes", "5", "-C", str(deep)]
    done = subprocess.run(
        [str(SCOREGATE_BIN), *args], capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL
    )

    assert done.returncode == 0, done.stderr
    words = " ".join(done.stderr.split())
    assert "budget 5 min: the wall time cannot be forecast without past runs" in words, done.stderr
    assert "prompts: local files" in words, done.stderr
    lines = done.stderr.splitlines()
    first_item = next(i for i, line in enumerate(lines) if re.match(r"^  \d+/\d+ items · ", line))
    before = lines[:first_item]  # the prompt source, the budget note, the shared local server's note
    assert [line for line in before if len(line) > width and " " in line.strip()] == [], done.stderr
