"""A tags dataset: transcripts and gold files in `datasets/<name>/`, built into `datasets/<name>.jsonl`.

Layout: `<folder>/transcripts/<sample_id>.json` (`{sample_id, segments: [{id, speaker, text}],
reference_summary?}`) and `<folder>/goldens/<sample_id>_gold.json`. Each transcript becomes one item:
`input.transcript` (segments rendered `[id] speaker: text`), `expected_output` the gold topics, risks and
actions (null when the sample has no gold file, so its tags scores are null with that reason), and
`metadata.reference_summary` for the summary mode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from scoregate.catalog.dataset_target import check_dataset_target
from scoregate.catalog.models import DatasetItem
from scoregate.catalog.yaml_files import read_yaml
from scoregate.errors import ScoregateError, ValidationFailed
from scoregate.support.files import replace_atomically
from scoregate.support.json_errors import json_position, json_problem
from scoregate.support.text_files import read_text_strict
from scoregate.tracks.tags.gold import GOLD_SUFFIX, read_gold

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["transcript"],
    "properties": {"transcript": {"type": "string", "minLength": 1, "description": "`[id] speaker: text` lines."}},
}


def render_transcript(segments: list[Mapping[str, Any]]) -> str:
    """Render segments as `[id] speaker: text` lines (the ids gold `segment_ids` refer to)."""
    return "\n".join(f"[{s['id']}] {s['speaker']}: {s['text']}" for s in segments)


def _read_transcript(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text_strict(path))
    except json.JSONDecodeError as exc:
        raise ScoregateError(json_problem(exc, unit="file"), where=f"{path}:{json_position(exc)[0]}") from None
    segments = data.get("segments") if isinstance(data, dict) else None
    if not isinstance(segments, list) or not segments:
        raise ScoregateError("needs `segments: [{id, speaker, text}, ...]`", where=str(path))
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict) or not {"id", "speaker", "text"} <= seg.keys():
            raise ScoregateError(f"segments[{i}] needs id, speaker and text", where=str(path))
    return data


def tags_item(transcript_path: Path, goldens: Path) -> DatasetItem:
    """Build one item from a transcript file and its gold file (if any); raise on a broken file."""
    data = _read_transcript(transcript_path)
    sample_id = str(data.get("sample_id") or transcript_path.stem)
    gold_path = goldens / f"{sample_id}{GOLD_SUFFIX}"
    expected: dict[str, Any] | None = None
    metadata: dict[str, Any] = {"reference_summary": data.get("reference_summary")}
    if gold_path.is_file():
        gold, violations = read_gold(gold_path)
        if violations:
            raise ValidationFailed([v.render() for v in violations], hint="fix the gold file, then build again")
        assert gold is not None
        expected = {key: gold[key] for key in ("topics", "risks", "actions")}
        metadata.update(annotator=gold["annotator"], annotated_at=gold["annotated_at"])
    metadata.update({k: v for k, v in data.items() if k not in ("sample_id", "segments", "reference_summary")})
    return DatasetItem(
        id=sample_id,
        input={"transcript": render_transcript(data["segments"])},
        expected_output=expected,
        metadata={k: v for k, v in metadata.items() if v is not None},
    )


def tags_items(folder: Path) -> list[DatasetItem]:
    """Every item of a tags dataset folder, in sample-id order."""
    transcripts = folder / "transcripts"
    if not transcripts.is_dir():
        raise ScoregateError(f"no transcripts/ folder in {folder}", hint="see docs/tracks/tags.md: a tags dataset")
    paths = sorted(transcripts.glob("*.json"))
    if not paths:
        raise ScoregateError(f"no transcript files in {transcripts}")
    return [tags_item(p, folder / "goldens") for p in paths]


def build_tags_dataset(folder: Path, out: Path, *, description: str = "") -> tuple[int, int]:
    """Write `out` (.jsonl) and its .yaml from a tags folder; return (items, items with gold labels)."""
    check_dataset_target(out)
    items = tags_items(folder)
    lines = [json.dumps(i.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False) for i in items]
    with replace_atomically(out) as handle:
        handle.write("\n".join(lines) + "\n")
    with_gold = sum(i.expected_output is not None for i in items)
    meta = {
        "description": description or f"Tags dataset built from {folder.name}/ (transcripts + goldens).",
        "input_schema": INPUT_SCHEMA,
        "metadata": {"task": "tags", "source_folder": folder.name},
    }
    meta_path = out.with_suffix(".yaml")
    if meta_path.is_file():  # keep a hand-written description and metadata
        old, problems = read_yaml(meta_path)
        if problems or not isinstance(old or {}, dict):
            raise ScoregateError(
                (problems or [f"{meta_path}: expected a mapping of fields"])[0],
                hint=f"fix {meta_path.name} (its description and metadata are kept), then build again",
            )
        meta = {**meta, **{k: v for k, v in (old or {}).items() if k in ("description", "metadata")}}
    with replace_atomically(meta_path) as handle:
        handle.write(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    return len(items), with_gold
