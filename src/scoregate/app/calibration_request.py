"""One judge calibration asked for: which scores to pair, from stored runs or a score file, and how to measure them."""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from pathlib import Path

from scoregate.errors import UsageError

MIN_RESAMPLES = 100


@dataclass(frozen=True)
class CalibrationRequest:
    """A calibration of `judge_key` against `human_key` over stored `runs` or one score `file`; checks itself.

    `scale`, `resamples` and `seed` left as None take the project's (or, for a file, the library's) defaults;
    `save` binds the result to the judge, so it needs runs.
    """

    judge_key: str
    human_key: str
    runs: tuple[str, ...] = ()
    file: Path | None = None
    document_key: str | None = None
    scale: tuple[int, int] | None = None
    resamples: int | None = None
    seed: int | None = None
    save: bool = False
    corrected_labels: int | None = None
    """Also check the corrected mean: this many items rated by both form a random calibration sample (`seed`), the
    rest the run, whose human mean is held back to compare (`analysis.corrected_check`)."""
    live: bool = False
    """Pair the live judges' scores (feedback/live_judges.jsonl, from `scores pull`) instead of the runs' own."""
    evaluator_version: str | None = None
    """With `live`: the deployed evaluator version to measure (needed when the live scores come from several)."""
    scale_text: InitVar[str | None] = None
    """`--scale` as typed (`LOW,HIGH`), parsed into `scale`; a bad one is refused with how to write it."""

    def __post_init__(self, scale_text: str | None) -> None:
        if scale_text:
            from scoregate.analysis.judge_calibration import parse_scale

            object.__setattr__(self, "scale", parse_scale(scale_text))
        for option, key in (("--judge-key", self.judge_key), ("--human-key", self.human_key)):
            if not key:
                raise UsageError(f"{option} is empty: name a score key or a column", option=option)
        if bool(self.runs) == (self.file is not None):
            raise UsageError("give either --run RUN_ID (repeatable) or --file FILE", option="--run/--file")
        if self.save and self.file is not None:
            raise UsageError("--save binds a calibration to a judge: use it with --run", option="--save")
        if self.evaluator_version is not None and not self.live:
            raise UsageError("--evaluator-version picks among live scores: use it with --live", option="--live")
        if self.live and (self.file is not None or self.save):
            raise UsageError(
                "--live measures a deployed evaluator version on --run: no --file, and no --save (a saved "
                "calibration is bound to the judge file, not to a deployed version)",
                option="--live",
            )
        if self.scale is not None and not self.scale[0] < self.scale[1]:
            low, high = self.scale
            raise UsageError(f"--scale {low},{high}: LOW must be below HIGH", option="--scale", hint="e.g. --scale 1,5")
        if self.corrected_labels is not None and self.corrected_labels < 1:
            raise UsageError(f"--corrected-labels {self.corrected_labels}: at least 1", option="--corrected-labels")
        if self.resamples is not None and self.resamples < MIN_RESAMPLES:
            raise UsageError(f"--resamples {self.resamples}: at least {MIN_RESAMPLES}", option="--resamples")
