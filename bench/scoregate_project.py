"""Build the temporary scoregate project that runs the kit's W1 work: same template, data, scorers and endpoint."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import yaml

EXPERIMENT = "w1"
MODEL = "mock"


def kit_template(kit: Path) -> str:
    """Return the kit's TEMPLATE with its `{text}` placeholder written the scoregate way, `{{text}}`."""
    spec = importlib.util.spec_from_file_location("bench_kit_common", kit / "common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    template: str = module.TEMPLATE
    if template.count("{text}") != 1:
        raise RuntimeError(f"{kit / 'common.py'}: TEMPLATE should hold exactly one {{text}} placeholder")
    return template.replace("{text}", "{{text}}")


def generate_kit_data(kit: Path, n: int, out: Path) -> Path:
    """Write (once) the kit's deterministic N-item dataset with its own generator; return its path."""
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(kit / "gen_data.py"), str(n), str(out)], check=True)
    return out


def convert_dataset(kit_data: Path, out: Path, n: int) -> int:
    """Stream the first `n` kit items into scoregate's shape {id, input: {text}, expected_output}; return the count."""
    count = 0
    with kit_data.open(encoding="utf-8") as source, out.open("w", encoding="utf-8") as sink:
        for line in source:
            if count >= n:
                break
            row = json.loads(line)
            item = {"id": row["id"], "input": {"text": row["text"]}, "expected_output": row["expected"]}
            sink.write(json.dumps(item, ensure_ascii=False) + "\n")
            count += 1
    if count < n:
        raise RuntimeError(f"{kit_data} holds {count} items, fewer than the {n} asked for")
    return count


def write_project(root: Path, *, kit: Path, kit_data: Path, n: int, port: int, concurrency: int) -> Path:
    """Write scoregate.yaml, the prompt, the counters evaluator and the dataset under `root`; return `root`."""
    for sub in ("prompts", "evaluators", "datasets"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    config = {
        "project": "scoregate-bench",
        "settings": {"model": MODEL, "judge_model": MODEL, "concurrency": concurrency},
        "models": {
            MODEL: {
                "provider": "openai",
                "model": MODEL,
                "base_url": f"http://127.0.0.1:{port}/v1",
                "max_connections": concurrency,
                "max_retries": 0,
                "timeout_s": 60,
            }
        },
        "experiments": {EXPERIMENT: {"dataset": EXPERIMENT, "prompt": EXPERIMENT, "evaluators": ["w1_counters"]}},
    }
    prompt = {"name": EXPERIMENT, "type": "text", "prompt": kit_template(kit)}
    counters = {
        "kind": "counters",
        "name": "w1_counters",
        "version": 1,
        "description": "The kit's two scorers: word count, and normalised Levenshtein similarity to the expected text.",
        "counters": [{"counter": "word_count"}, {"counter": "similarity", "source": "expected_output"}],
    }
    (root / "scoregate.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "prompts" / f"{EXPERIMENT}.yaml").write_text(yaml.safe_dump(prompt, sort_keys=False), encoding="utf-8")
    (root / "evaluators" / "w1_counters.yaml").write_text(yaml.safe_dump(counters, sort_keys=False), encoding="utf-8")
    convert_dataset(kit_data, root / "datasets" / f"{EXPERIMENT}.jsonl", n)
    return root
