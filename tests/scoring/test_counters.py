"""Deterministic counters on hand-written summaries of both styles, and on real summaries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoregate.errors import ScoregateError
from scoregate.providers.base import Completion, CompletionRequest
from scoregate.scoring.base import EvalContext
from scoregate.scoring.counters import CountersEvaluator, entry_name, find_urls
from scoregate.scoring.kinds.counters import CountersSpec
from scoregate.scoring.sections import SectionFinder
from scoregate.store.records import Score

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data"

HOWTO = """\
## TL;DR
Move event ingestion to Kafka, model it with dbt, and halve the warehouse bill.

## Step-by-step instructions
1. Install Kafka 3.7 and create one topic per event type (see https://kafka.apache.org/quickstart).
2. Stream topics into the warehouse with Kafka Connect.
3. Model the raw tables with dbt; run `dbt build` nightly.

### Sizing
- Start with 12 partitions per topic.

## Pitfalls & Notes
- Too few partitions caps consumer parallelism.

## References & Tools
- Kafka: event streaming — https://kafka.apache.org
- [dbt docs](https://docs.getdbt.com/).
- **Kafka Connect** - moves data between Kafka and other systems
- kafka connect
- Designing Data-Intensive Applications (Kleppmann, 2017)
"""

CATCHUP = """\
**TL;DR:** The hosts compare three open-weight models and conclude that evaluation, not size, decides.

**Key Topics**
- Benchmarks saturate quickly.
- Private evals beat leaderboards.

Where to read more:
- The eval write-up <https://example.org/evals>, and https://example.org/evals/.

References and Tools: Langfuse, MLflow, Inspect (UK AISI)
"""

SECTIONS = {
    "catchup": ["TL;DR", "Key Topics", "Where to Read More", "References & Tools"],
    "howto": ["TL;DR", "Step-by-step", "Pitfalls/Notes", "References & Tools"],
}


async def _no_model(model: str | None, request: CompletionRequest, purpose: str) -> Completion:
    raise AssertionError("counters must not call a model")


def ctx(output: Any, *, expected: Any = None, **inputs: Any) -> EvalContext:
    """An item whose input holds `inputs`."""
    return EvalContext("item-1", inputs, output, expected, {}, _no_model)


def evaluator(*counters: dict[str, Any]) -> CountersEvaluator:
    return CountersEvaluator(CountersSpec(kind="counters", name="c", version=1, counters=list(counters)))


def scores(ev: CountersEvaluator, item: EvalContext) -> dict[str, Score]:
    return {s.name: s for s in asyncio.run(ev.evaluate(item))}


def shipped() -> CountersEvaluator:
    raw = yaml.safe_load((ROOT / "evaluators" / "counters_v1.yaml").read_text())
    return CountersEvaluator(CountersSpec.model_validate(raw))


# ------------------------------------------------------------------ the shipped file, both styles


def test_howto_summary_scores_every_counter() -> None:
    transcript = "word " * 400
    got = scores(shipped(), ctx(HOWTO, transcript=transcript, desired_style="howto", max_words_tldr=15))
    words = len(HOWTO.split())
    assert got["word_count"].value == words
    assert got["compression_ratio"].value == pytest.approx(words / 400)
    # URLs: kafka quickstart, kafka.apache.org, docs.getdbt.com; entries without URL: Kafka Connect
    # (twice, any case) and the book.
    assert got["references_count"].value == 5
    # names: Kafka, dbt docs, Kafka Connect, Designing Data-Intensive Applications
    assert got["tools_count"].value == 4
    assert got["tldr_within_cap"].value == 1
    assert got["required_sections_present"].value == 1
    assert got["missing_sections_det"].value == ""
    assert all(s.evaluator == "counters_v1" for s in got.values())


def test_catchup_summary_with_inline_labels() -> None:
    got = scores(shipped(), ctx(CATCHUP, transcript="x " * 100, desired_style="catchup", max_words_tldr=10))
    assert got["required_sections_present"].value == 1
    assert got["missing_sections_det"].value == ""
    assert got["tldr_within_cap"].value == 0  # 15 words over a cap of 10
    assert got["tools_count"].value == 3  # Langfuse, MLflow, Inspect — the parenthesis is not a name
    assert got["references_count"].value == 1 + 3  # the same URL twice (trailing / and >) + 3 names


def test_missing_sections_are_named_in_order() -> None:
    summary = "## TL;DR\nShort.\n\n## Steps\n- do it\n"
    got = scores(shipped(), ctx(summary, transcript="a b c", desired_style="howto", max_words_tldr=50))
    assert got["required_sections_present"].value == 0
    assert got["missing_sections_det"].value == "Step-by-step, Pitfalls/Notes, References & Tools"
    assert got["tools_count"].value is None
    assert "References & Tools" in (got["tools_count"].reason or "")
    assert got["references_count"].value == 0


@pytest.mark.parametrize("style", [None, "essay"])
def test_unknown_or_missing_style_is_null_with_reason(style: str | None) -> None:
    got = scores(shipped(), ctx(HOWTO, transcript="a", desired_style=style, max_words_tldr=50))
    for key in ("required_sections_present", "missing_sections_det"):
        assert got[key].value is None
        assert "catchup, howto" in (got[key].reason or "")
    assert got["word_count"].measured


def test_non_string_output_nulls_every_counter() -> None:
    for output, shown in (({"summary": "x"}, "dict"), (None, "null")):
        got = scores(shipped(), ctx(output, transcript="a b", desired_style="howto", max_words_tldr=5))
        assert len(got) == 7
        assert all(s.value is None and s.reason == f"output is {shown}, not text" for s in got.values())


# ------------------------------------------------------------------ section headings


@pytest.mark.parametrize(
    "heading",
    ["## TL;DR", "# TLDR", "**TL;DR**", "**TL;DR:**", "TL;DR:", "tl dr:", "### 1. TL;DR (max 60 words)", "TL;DR"],
)
def test_tldr_heading_variants_are_found(heading: str) -> None:
    finder = SectionFinder(["TL;DR", "References & Tools"])
    found = finder.parse(f"Intro line.\n{heading}\nThe gist in five words.\n## References & Tools\n- x\n")
    assert found["TL;DR"].body == "The gist in five words."


@pytest.mark.parametrize(
    ("written", "title"),
    [
        ("## Step by step", "Step-by-step"),
        ("## Step-by-step instructions", "Step-by-step"),
        ("**Pitfalls & Notes**", "Pitfalls/Notes"),
        ("## Pitfalls", "Pitfalls/Notes"),
        ("Pitfalls and notes:", "Pitfalls/Notes"),
        ("#### References", "References & Tools"),
    ],
)
def test_titles_match_despite_punctuation_and_prefixes(written: str, title: str) -> None:
    finder = SectionFinder(["Step-by-step", "Pitfalls/Notes", "References & Tools"])
    assert title in finder.parse(f"{written}\nbody\n")


def test_prose_and_list_items_do_not_open_sections() -> None:
    finder = SectionFinder(["Step-by-step", "References & Tools", "Key Topics"])
    text = "Step 1: install it.\n- References: see below\nThe key topics were many.\n##### References\n"
    assert finder.parse(text) == {}


def test_subheadings_stay_inside_and_sibling_headings_end_a_section() -> None:
    finder = SectionFinder(["Step-by-step"])
    found = finder.parse("## Step-by-step\n1. a\n### Detail\n2. b\n## Appendix\nnot a step\n")
    assert found["Step-by-step"].body == "1. a\n### Detail\n2. b"


# ------------------------------------------------------------------ single counters


def test_urls_lose_trailing_punctuation_but_keep_balanced_parentheses() -> None:
    text = (
        "See (https://a.example/x). Also <https://b.example>, https://c.example/y, "
        "[wiki](https://en.wikipedia.org/wiki/Kafka_(software)) and **https://d.example**."
    )
    assert find_urls(text) == [
        "https://a.example/x",
        "https://b.example",
        "https://c.example/y",
        "https://en.wikipedia.org/wiki/Kafka_(software)",
        "https://d.example",
    ]


def test_references_count_dedupes_urls_and_names_case_insensitively() -> None:
    ev = evaluator({"counter": "references_count"})
    summary = (
        "Read https://A.example/page/ and https://a.example/page.\n\n## References & Tools\n"
        "- Airflow\n- airflow: the scheduler\n- https://b.example\n- *Airflow*\n"
    )
    assert scores(ev, ctx(summary))["references_count"].value == 3  # 2 URLs + Airflow


@pytest.mark.parametrize(
    ("entry", "name"),
    [
        ("**Kafka** — event streaming", "Kafka"),
        ("[dbt](https://docs.getdbt.com) - transformations", "dbt"),
        ("`uv`: Python package manager", "uv"),
        ("https://example.org", ""),
        ("Great Expectations (data tests)", "Great Expectations"),
    ],
)
def test_entry_names_drop_urls_markdown_and_descriptions(entry: str, name: str) -> None:
    assert entry_name(entry) == name


def test_tools_count_counts_top_level_items_only() -> None:
    ev = evaluator({"counter": "tools_count"})
    summary = "## References & Tools\n- Kafka\n  - used for ingestion\n- Flink\n- FLINK\n- https://x.example\n"
    assert scores(ev, ctx(summary))["tools_count"].value == 2


def test_empty_references_section_counts_zero_tools() -> None:
    ev = evaluator({"counter": "tools_count"})
    assert scores(ev, ctx("## References & Tools\n\n## Other\n- Kafka\n"))["tools_count"].value == 0


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ({}, "no TL;DR word cap: input.max_words_tldr is missing"),
        ({"max_words_tldr": "sixty"}, "not a whole number"),
    ],
)
def test_tldr_cap_missing_or_invalid_is_null(inputs: dict[str, Any], reason: str) -> None:
    ev = evaluator({"counter": "tldr_within_cap", "cap": "input.max_words_tldr"})
    got = scores(ev, ctx("## TL;DR\nfine\n", **inputs))["tldr_within_cap"]
    assert got.value is None
    assert reason in (got.reason or "")


def test_tldr_cap_counts_words_not_list_markers() -> None:
    ev = evaluator({"counter": "tldr_within_cap", "cap": 4})
    assert scores(ev, ctx("## TL;DR\n- one two\n- three four\n"))["tldr_within_cap"].value == 1
    assert scores(ev, ctx("## TL;DR\none two three four five\n"))["tldr_within_cap"].value == 0
    no_tldr = scores(ev, ctx("Just prose."))["tldr_within_cap"]
    assert no_tldr.value is None and no_tldr.reason == "the output has no TL;DR section"


@pytest.mark.parametrize(("transcript", "reason"), [(None, "is missing"), ("  ", "is empty"), (["a"], "list")])
def test_compression_ratio_without_transcript_is_null(transcript: Any, reason: str) -> None:
    ev = evaluator({"counter": "compression_ratio"})
    got = scores(ev, ctx("a b", transcript=transcript))["compression_ratio"]
    assert got.value is None
    assert reason in (got.reason or "")


def test_similarity_to_the_reference() -> None:
    ev = evaluator({"counter": "similarity"})
    assert scores(ev, ctx("kitten", expected="sitting"))["similarity"].value == pytest.approx(1 - 3 / 7)
    assert scores(ev, ctx("same", expected="same"))["similarity"].value == 1.0
    missing = scores(ev, ctx("text"))["similarity"]
    assert missing.value is None and "expected_output is missing" in (missing.reason or "")


def test_similarity_reads_a_configured_source() -> None:
    ev = evaluator({"counter": "similarity", "key": "sim_to_title", "source": "input.title"})
    assert scores(ev, ctx("abc", title="abd"))["sim_to_title"].value == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("counter", "message"),
    [
        ({"counter": "tldr_within_cap"}, "needs `cap:`"),
        ({"counter": "required_sections"}, "needs `sections:`"),
        ({"counter": "similarity", "source": "reference"}, "unknown source 'reference'"),
        ({"counter": "tldr_within_cap", "cap": "item.cap"}, "unknown source 'item.cap'"),
    ],
)
def test_bad_counter_options_fail_before_any_item(counter: dict[str, Any], message: str) -> None:
    with pytest.raises(ScoregateError, match=message):
        evaluator(counter)


def test_duplicate_keys_are_rejected() -> None:
    with pytest.raises(ScoregateError, match="written twice"):
        evaluator({"counter": "word_count"}, {"counter": "similarity", "key": "word_count"})


def test_counters_that_need_no_sections_do_not_parse_them(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(self: SectionFinder, text: str) -> None:
        raise AssertionError("sections parsed for word_count + similarity")

    monkeypatch.setattr(SectionFinder, "parse", fail)
    ev = evaluator({"counter": "word_count"}, {"counter": "similarity"})
    assert scores(ev, ctx("## TL;DR\na b", expected="a b"))["word_count"].value == 4


# ------------------------------------------------------------------ real summaries


def test_real_summeval_outputs_are_all_measured_and_closer_to_their_own_reference() -> None:
    path = DATA / "summeval" / "summeval_expert_1600.json"
    if not path.exists():
        pytest.skip(f"real data not found at {path}")
    records = json.loads(path.read_text())[::8]
    ev = evaluator({"counter": "word_count"}, {"counter": "similarity"}, {"counter": "tools_count"})
    own: list[float] = []
    other: list[float] = []
    for i, r in enumerate(records):
        got = scores(ev, ctx(r["system_output"], expected=r["reference"]))
        assert got["word_count"].value == len(r["system_output"].split())
        assert got["tools_count"].value is None  # news summaries have no References & Tools section
        stranger = records[(i + 40) % len(records)]["reference"]
        to_stranger = scores(ev, ctx(r["system_output"], expected=stranger))["similarity"].value
        for value, into in ((got["similarity"].value, own), (to_stranger, other)):
            assert isinstance(value, float) and 0 <= value <= 1
            into.append(value)
    assert sum(own) / len(own) > sum(other) / len(other) + 0.05


def test_real_meeting_summary_compresses_its_transcript() -> None:
    path = DATA / "qmsum" / "meetings" / "ES2004a.json"
    if not path.exists():
        pytest.skip(f"real data not found at {path}")
    meeting = json.loads(path.read_text())
    transcript = "\n".join(f"{t['speaker']}: {t['content']}" for t in meeting["meeting_transcripts"])
    summary = meeting["general_query_list"][0]["answer"]
    got = scores(evaluator({"counter": "compression_ratio"}), ctx(summary, transcript=transcript))
    ratio = got["compression_ratio"].value
    assert isinstance(ratio, float) and 0 < ratio < 0.1
