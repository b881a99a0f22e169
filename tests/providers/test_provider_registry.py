"""Providers own their facts and are built lazily by name: the key a run checks, where requests go, how JSON is
asked for and how many calls are in flight come from the provider; a provider's module (and its SDK) loads only
when one of its models is used; a new provider is one file and one registry line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scoregate.catalog.config_models import Settings
from scoregate.catalog.models import ModelSpec
from scoregate.providers.base import ProviderContext
from scoregate.providers.registry import PROVIDERS, ProviderEntry, build_provider
from support.layering_rules import imported_modules
from support.projects import CliResult, Runs
from support.scripted_openai import ScriptedOpenAI

Edit = Callable[[Path, Callable[[Any], None]], None]
SRC = Path(__file__).resolve().parents[2] / "src" / "scoregate"
PROVIDER_MODULES = ("scoregate.providers.openai_compat", "scoregate.providers.anthropic_provider",
                    "scoregate.providers.local_server", "scoregate.providers.local")  # fmt: skip


def facts(provider: str, **fields: Any) -> tuple[str | None, str, str | None, int]:
    """What a run asks of a model's provider: the key it checks, its endpoint, its JSON style, its connections."""
    context = ProviderContext(Path("/nowhere"), Settings(local_port=fields.pop("local_port", None)))
    built = build_provider("m", ModelSpec(provider=provider, model="x", **fields), context)
    return built.key_variable(), built.endpoint, built.structured_output, built.max_connections()


def test_each_provider_answers_the_facts_a_run_used_to_branch_on(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "SCOREGATE_LOCAL_PORT"):
        monkeypatch.delenv(name, raising=False)

    assert facts("openai") == ("OPENAI_API_KEY", "https://api.openai.com/v1", "json_schema", 16)
    assert facts("openai", base_url="http://10.0.0.5:8000/v1") == (None, "http://10.0.0.5:8000/v1", "json_schema", 16)
    assert facts("anthropic") == ("ANTHROPIC_API_KEY", "https://api.anthropic.com", None, 16)
    assert facts("local") == (None, "http://127.0.0.1:8765/v1", "json_object_schema", 2)
    assert facts("local", local_port=8799, max_connections=6) == (
        None,
        "http://127.0.0.1:8799/v1",
        "json_object_schema",
        6,
    )
    assert facts("local", api_key_env="LLAMA_KEY")[0] == "LLAMA_KEY"
    key, endpoint, style, connections = facts("scripted")
    assert (key, style, connections) == (None, None, 16) and endpoint.startswith("scripted:")


def test_the_default_base_url_of_openai_follows_openai_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("SCOREGATE_LOCAL_PORT", "8798")

    assert facts("openai")[:2] == (None, "http://127.0.0.1:9/v1")  # not OpenAI's API: no key required
    assert facts("local", local_port=8799)[1] == "http://127.0.0.1:8798/v1"  # the variable wins over the setting


def test_prices_are_each_providers_own(monkeypatch: pytest.MonkeyPatch) -> None:
    def price(provider: str, model: str, **fields: Any) -> tuple[float, float] | None:
        return build_provider("m", ModelSpec(provider=provider, model=model, **fields)).price()

    assert price("openai", "gpt-4o-mini") == (0.15, 0.60)
    assert price("anthropic", "claude-3-5-haiku-latest") == (0.80, 4.00)
    assert price("anthropic", "gpt-4o-mini") is None  # another provider's list is not this one's
    assert price("local", "gpt-4o-mini") == (0.0, 0.0)  # runs on this machine, whatever its name
    assert price("openai", "my-vllm-model") is None
    assert price("openai", "my-vllm-model", input_cost_per_mtok=1, output_cost_per_mtok=2) == (1, 2)


@pytest.mark.parametrize(
    ("model", "variable", "where_to_get_one"),
    [
        ({"provider": "anthropic", "model": "claude-3-5-haiku-latest"}, "ANTHROPIC_API_KEY", "console.anthropic.com"),
        ({"provider": "openai", "model": "gpt-4o-mini"}, "OPENAI_API_KEY", "platform.openai.com/api-keys"),
    ],
    ids=["anthropic", "openai"],
)
def test_a_missing_key_is_named_with_where_that_provider_makes_keys(
    model: dict[str, str],
    variable: str,
    where_to_get_one: str,
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    scripted_server: ScriptedOpenAI,
    runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(variable, raising=False)
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(paid=model))

    result = scoregate("run", "counters", "--model", "paid", "--no-mlflow")

    assert result.code == 1, result.output
    assert f"model 'paid': its API key variable {variable} is not set (or empty)" in result.output
    assert f"export {variable}=..." in result.output and where_to_get_one in result.output
    assert runs.ids() == [] and scripted_server.requests == []


def test_an_unknown_provider_is_named_with_the_known_ones(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit, runs: Runs
) -> None:
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(typo={"provider": "openia", "model": "m"}))

    checked = scoregate("validate")
    ran = scoregate("run", "counters", "--model", "typo", "--no-mlflow")

    expected = (
        "scoregate.yaml: models.typo.provider: no provider 'openia' (defined: anthropic, local, openai, scripted)"
    )
    for result in (checked, ran):
        assert result.code == 1, result.output
        assert expected in result.output and "did you mean `openai`?" in result.output
    assert runs.ids() == []


def test_options_are_checked_by_the_provider_that_takes_them(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit
) -> None:
    def add(config: Any) -> None:
        config["models"]["canned"] = {"provider": "scripted", "model": "c", "options": {"reples": []}}
        config["models"]["served"] = {"provider": "openai", "model": "s", "options": {"replies": []}}

    edit_yaml(project_dir / "scoregate.yaml", add)

    result = scoregate("validate")

    assert result.code == 1, result.output
    assert "scoregate.yaml: models.canned.options.reples: Extra inputs are not permitted" in result.output
    assert (
        "scoregate.yaml: models.served.options: provider 'openai' takes no options; remove `options:`" in result.output
    )


def _modules_after_run(project: Path, prelude: str = "") -> tuple[int, str, set[str]]:
    """Run `scoregate run counters` in a fresh interpreter; return its exit code, output and sys.modules."""
    argv = ["scoregate", "run", "counters", "--no-mlflow", "-C", str(project)]
    code = "\n".join([
        "import sys, json", prelude, f"sys.argv = {argv!r}",
        "from scoregate.cli import main", "try:", "    main()", "except SystemExit as exc:", "    code = exc.code",
        "else:", "    code = 0", "print('MODULES ' + json.dumps(sorted(sys.modules)))", "sys.exit(code)",
    ])  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=120)
    marker = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    modules = set(json.loads(marker[-1].removeprefix("MODULES "))) if marker else set()
    return done.returncode, " ".join((done.stdout + done.stderr).split()), modules


def test_a_run_imports_only_the_providers_its_models_use(canned_project_dir: Path) -> None:
    code, output, modules = _modules_after_run(canned_project_dir)

    assert code == 0, output
    assert "scoregate.providers.scripted" in modules
    assert not {"anthropic", "openai", *PROVIDER_MODULES} & modules


def test_a_missing_sdk_says_what_to_install(
    canned_project_dir: Path, edit_yaml: Edit, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = {"provider": "anthropic", "model": "claude-3-5-haiku-latest", "api_key_env": "SCRIPTED_KEY"}
    edit_yaml(canned_project_dir / "scoregate.yaml", lambda c: c["models"].update(scripted=claude))
    monkeypatch.setenv("SCRIPTED_KEY", "k")

    code, output, _ = _modules_after_run(canned_project_dir, prelude="sys.modules['anthropic'] = None")

    assert code == 1, output
    assert "provider 'anthropic' needs the Python package 'anthropic', which is not installed" in output
    assert "pip install 'anthropic>=2.10,<3'" in output and "Traceback" not in output
    assert not (canned_project_dir / "runs").exists()


ECHO_PROVIDER = '''
"""A throwaway provider: replies with the last message upper-cased; needs ECHO_KEY; one call at a time."""

from scoregate.providers.base import Completion, CompletionRequest, Provider


class EchoProvider(Provider):
    key_env_var = "ECHO_KEY"
    needs_key = True
    key_hint = "echo keys are made by hand"
    default_base_url = "echo://here"
    default_connections = 1

    @property
    def endpoint(self) -> str:
        return self.base_url() or ""

    async def complete(self, request: CompletionRequest) -> Completion:
        text = request.messages[-1]["content"].upper()
        return Completion(text=text, tokens_in=1, tokens_out=len(text.split()), cost_usd=0.0)

    async def aclose(self) -> None:
        pass
'''


def test_a_new_provider_is_one_file_and_one_registry_line(
    scoregate: Callable[..., CliResult],
    project_dir: Path,
    edit_yaml: Edit,
    runs: Runs,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "echo_provider.py").write_text(ECHO_PROVIDER, encoding="utf-8")  # the one file
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setitem(PROVIDERS, "echo", ProviderEntry("echo_provider:EchoProvider"))  # the one registry line
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(echo={"provider": "echo", "model": "e1"}))
    monkeypatch.delenv("ECHO_KEY", raising=False)

    refused = scoregate("run", "counters", "--model", "echo", "--no-mlflow")
    monkeypatch.setenv("ECHO_KEY", "k")
    ran = scoregate("run", "counters", "--model", "echo", "--no-mlflow")

    assert refused.code == 1 and "model 'echo': its API key variable ECHO_KEY is not set" in refused.output
    assert "echo keys are made by hand" in refused.output
    assert ran.code == 0, ran.output
    receipt = runs.manifest()["receipts"]["model"]
    assert (receipt["provider"], receipt["model"], receipt["endpoint"]) == ("echo", "e1", "echo://here")
    results = runs.results()
    assert len(results) == 6 and all(r["error"] is None for r in results)
    assert all(r["output"] == r["output"].upper() and "EPISODE TITLE" in r["output"] for r in results)
    assert {c["endpoint"] for r in results for c in r["calls"]} == {"echo://here"}
    assert build_provider("echo", ModelSpec(provider="echo", model="e1")).max_connections() == 1


def test_model_calls_and_the_engine_name_no_provider_and_the_catalog_imports_none() -> None:
    """The arrows docs/architecture.md draws for providers: calls/ and engine/ reach a provider through the
    registry only; the catalog (a file format) imports no provider and no scoring code."""
    named = {
        f"{path.relative_to(SRC)}: {module}"
        for package in ("calls", "engine")
        for path in sorted((SRC / package).glob("*.py"))
        for module in imported_modules(path)
        if module in PROVIDER_MODULES or (package == "calls" and module.startswith("scoregate.scoring"))
    }
    catalog = {
        f"{path.relative_to(SRC)}: {module}"
        for path in sorted((SRC / "catalog").rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith("scoregate.providers")
    }
    assert named == set() and catalog == set()


INCOMPLETE_PROVIDER = '''
"""A plug-in provider that forgot `complete` and `aclose`."""

from scoregate.providers.base import Provider


class HalfProvider(Provider):
    @property
    def endpoint(self) -> str:
        return "half://here"
'''


def test_a_provider_missing_a_required_method_is_caught_by_validate_and_run_without_a_traceback(
    scoregate: Callable[..., CliResult], project_dir: Path, edit_yaml: Edit, tmp_path: Path, runs: Runs,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "half_provider.py").write_text(INCOMPLETE_PROVIDER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setitem(PROVIDERS, "half", ProviderEntry("half_provider:HalfProvider"))
    monkeypatch.setitem(PROVIDERS, "typo", ProviderEntry("half_provider:HalfProvidr"))
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(half={"provider": "half", "model": "h"}))

    checked = scoregate("validate")
    ran = scoregate("run", "counters", "--model", "half", "--no-mlflow")
    edit_yaml(project_dir / "scoregate.yaml", lambda c: c["models"].update(half={"provider": "typo", "model": "h"}))
    misnamed = scoregate("validate")

    expected = (
        "scoregate.yaml: models.half.provider: provider 'half' (half_provider:HalfProvider) does not implement "
        "aclose, complete"
    )
    for result in (checked, ran):
        assert result.code == 1, result.output
        assert expected in result.output, result.output
        assert "(a Provider implements aclose, complete, endpoint: scoregate/providers/base.py)" in result.output
    assert runs.ids() == []
    assert misnamed.code == 1
    assert "models.half.provider: provider 'typo': module half_provider has no class 'HalfProvidr'" in misnamed.output
