"""Post scoregate's Markdown evidence on a pull request as ONE comment, updated on every push.

    python examples/pr-evidence/post_evidence.py evidence/*.md

The files (written by `scoregate compare ... --markdown FILE` or `scoregate run ... --markdown FILE`) are joined
under a hidden marker line; the script looks through the pull request's comments for one that starts with the
marker and edits it, or adds the comment when there is none yet. Standard library only, so a workflow needs
nothing installed for it.

Environment (GitHub Actions sets all but the token's name): GITHUB_TOKEN, GITHUB_REPOSITORY (owner/name),
GITHUB_EVENT_PATH (the pull_request event, for its number; or pass --pr N), GITHUB_API_URL (default
https://api.github.com). Exit 0 and one line saying `created` or `updated` and the comment's URL; exit 1 and
one line saying what to fix on anything else.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- scoregate-pr-evidence -->"
LIMIT = 65_536
"""GitHub's largest comment body, in characters."""
CUT = "\n\n*… cut to fit GitHub's comment limit: the job summary and the reports have everything.*\n"


class Trouble(Exception):
    """What went wrong, in one line that says what to do."""


def body(files: list[Path]) -> str:
    """Return the comment: the marker, then each file's evidence, cut at a line to stay within GitHub's limit."""
    parts = [MARKER]
    for path in files:
        try:
            parts.append(path.read_text(encoding="utf-8").strip())
        except OSError as exc:
            raise Trouble(
                f"{path}: cannot read the evidence ({exc.strerror}); did the scoregate step write it?"
            ) from exc
    text = "\n\n---\n\n".join(parts) + "\n"
    if len(text) <= LIMIT:
        return text
    kept = text[: LIMIT - len(CUT)]
    return kept[: kept.rfind("\n")] + CUT


def _call(api: str, token: str, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        api.rstrip("/") + path,
        data=None if payload is None else json.dumps(payload).encode(),
        method=method,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        hints = {
            401: "check GITHUB_TOKEN",
            403: "give the job `permissions: pull-requests: write`",
            404: "check GITHUB_REPOSITORY and the pull request number",
        }
        hint = hints.get(exc.code, "see GitHub's answer")
        raise Trouble(f"GitHub answered {exc.code} to {method} {path}: {hint}") from exc
    except urllib.error.URLError as exc:
        raise Trouble(f"cannot reach {api} ({exc.reason}); check GITHUB_API_URL") from exc


def own_comment(api: str, token: str, repo: str, pr: int) -> dict[str, Any] | None:
    """Return the pull request's comment that starts with the marker, if any (every page is read)."""
    page = 1
    while True:
        comments = _call(api, token, "GET", f"/repos/{repo}/issues/{pr}/comments?per_page=100&page={page}")
        for comment in comments:
            if str(comment.get("body") or "").startswith(MARKER):
                return dict(comment)
        if len(comments) < 100:
            return None
        page += 1


def post(api: str, token: str, repo: str, pr: int, text: str) -> tuple[str, str]:
    """Edit the pull request's evidence comment or add it; return ("updated" or "created", its URL)."""
    found = own_comment(api, token, repo, pr)
    if found is not None:
        done = _call(api, token, "PATCH", f"/repos/{repo}/issues/comments/{found['id']}", {"body": text})
        return "updated", str(done.get("html_url", ""))
    done = _call(api, token, "POST", f"/repos/{repo}/issues/{pr}/comments", {"body": text})
    return "created", str(done.get("html_url", ""))


def _pr_number(given: int | None) -> int:
    if given is not None:
        return given
    event = os.environ.get("GITHUB_EVENT_PATH")
    try:
        return int(json.loads(Path(event or "").read_text(encoding="utf-8"))["pull_request"]["number"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise Trouble("no pull request number: run on a pull_request event or pass --pr N") from exc


def main(argv: list[str] | None = None) -> int:
    """Post or update the evidence comment; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="Markdown evidence files, in the order to show them")
    parser.add_argument("--pr", type=int, help="pull request number (default: from GITHUB_EVENT_PATH)")
    args = parser.parse_args(argv)
    try:
        token, repo = os.environ.get("GITHUB_TOKEN"), os.environ.get("GITHUB_REPOSITORY")
        if not token or not repo:
            raise Trouble("set GITHUB_TOKEN and GITHUB_REPOSITORY (GitHub Actions sets the second; pass the first)")
        api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
        what, url = post(api, token, repo, _pr_number(args.pr), body(args.files))
    except Trouble as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{what} the evidence comment: {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
