"""Remove every known secret value from a text before it is stored, printed or mirrored.

Known secrets are the values of the environment variables that hold keys: every variable a model names
in `api_key_env`, the usual provider key variables, anything ending in `_API_KEY`, `_SECRET_KEY`,
`_SECRET` or `_TOKEN`, and the Langfuse secret in its HTTP Basic form (`base64(public:secret)`).

A secret is masked whole, and so is any run of at least FRAGMENT characters copied from one (a key an
endpoint echoed and then cut, or cut by us): texts are redacted before they are shortened, and a part of
a key left by someone else's cut is still masked.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

MASK = "[REDACTED]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
FRAGMENT = 20
"""A run of this many characters of a secret (or of its base64 forms) is masked wherever it appears."""
_PROBE = 11
"""Length of the pieces looked up every FRAGMENT - _PROBE + 1 characters: any FRAGMENT-long run holds one."""
_STRIDE = FRAGMENT - _PROBE + 1
_SUFFIXES = ("_API_KEY", "_SECRET_KEY", "_SECRET", "_TOKEN", "_PASSWORD")
_registered: set[str] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LANGFUSE_SECRET_KEY"}
_registry_version = 0


def register_secret_env(names: Iterable[str | None]) -> None:
    """Treat the values of these environment variables as secrets from now on (e.g. models' `api_key_env`)."""
    global _registry_version
    before = len(_registered)
    _registered.update(n for n in names if n)
    _registry_version += len(_registered) - before


def _secret_values() -> frozenset[str]:
    env = os.environ
    names = {n for n in env if n.upper().endswith(_SUFFIXES)} | _registered
    values = {env[n] for n in names if len(env.get(n, "")) >= MIN_SECRET_LENGTH}
    public, secret = env.get("LANGFUSE_PUBLIC_KEY", ""), env.get("LANGFUSE_SECRET_KEY", "")
    if secret:
        values.add(base64.b64encode(f"{public}:{secret}".encode()).decode())
    return frozenset(values)


def _forms(value: str) -> list[str]:
    """The value and its base64 forms: alone, and inside a longer base64 text at each of the 3 byte offsets."""
    raw = value.encode()
    shifted = [base64.b64encode(b"\0" * k + raw).decode()[4:] for k in (1, 2)]  # 4 chars hold the prefix
    return [value, base64.b64encode(raw).decode(), *shifted]


@dataclass(frozen=True)
class _Index:
    whole: tuple[str, ...]
    """Secrets (and forms) shorter than FRAGMENT: masked only where they appear whole, longest first."""
    probes: frozenset[str]
    windows: frozenset[str]


_last: tuple[object, _Index] | None = None


def _environment() -> object:
    """A cheap snapshot that changes whenever the environment or the registered names do (redact runs per call)."""
    raw = getattr(os.environ, "_data", None)  # CPython's own store: a snapshot in ~1 µs instead of ~20
    return _registry_version, tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())


def _index() -> _Index:
    global _last
    snapshot = _environment()
    if _last is not None and _last[0] == snapshot:
        return _last[1]
    forms = {form for value in _secret_values() for form in _forms(value) if len(form) >= MIN_SECRET_LENGTH}
    long = [f for f in forms if len(f) >= FRAGMENT]
    found = _Index(
        whole=tuple(sorted((f for f in forms if len(f) < FRAGMENT), key=len, reverse=True)),
        probes=frozenset(f[i : i + _PROBE] for f in long for i in range(len(f) - _PROBE + 1)),
        windows=frozenset(f[i : i + FRAGMENT] for f in long for i in range(len(f) - FRAGMENT + 1)),
    )
    _last = (snapshot, found)
    return found


def known_secrets() -> list[str]:
    """Return every secret value currently known, longest first (so a longer form is masked whole)."""
    values = set(_secret_values())
    for value in list(values):
        values.add(base64.b64encode(value.encode()).decode())
    return sorted(values, key=len, reverse=True)


def _fragment_spans(text: str, index: _Index) -> list[tuple[int, int]]:
    """The stretches of `text` made of FRAGMENT-long runs of a secret, merged, in order."""
    spans: list[tuple[int, int]] = []
    probes, windows = index.probes, index.windows
    for q in range(0, len(text) - _PROBE + 1, _STRIDE):
        if text[q : q + _PROBE] not in probes:
            continue
        for p in range(max(0, q - _STRIDE + 1), q + 1):
            if text[p : p + FRAGMENT] in windows:
                if spans and p <= spans[-1][1]:
                    spans[-1] = (spans[-1][0], max(spans[-1][1], p + FRAGMENT))
                else:
                    spans.append((p, p + FRAGMENT))
    return spans


def redact(text: str) -> str:
    """Return `text` with every known secret value, and every FRAGMENT-long piece of one, replaced by [REDACTED]."""
    if not text:
        return text
    index = _index()
    if index.windows:
        spans = _fragment_spans(text, index)
        if spans:
            parts, at = [], 0
            for start, end in spans:
                parts += [text[at:start], MASK]
                at = end
            text = "".join(parts) + text[at:]
    for secret in index.whole:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_optional(text: str | None) -> str | None:
    """`redact`, passing None through."""
    return None if text is None else redact(text)


# ---------------------------------------------------------------- personal data (production text, before disk)

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_CARD = re.compile(r"(?<!\d)(?<!\d\.)\d(?:[ -]?\d){12,18}(?!\d)(?!\.\d)")
_IPV4 = re.compile(
    r"(?<!\d)(?<!\d\.)(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\d)(?!\.\d)"
)
_IPV6 = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])")
_PHONE = re.compile(r"(?<![\w+])(?<!\d\.)(?:\+|00)?\d[\d ().-]{6,}\d(?!\w)(?!\.\d)")
_KEY = re.compile(
    r"(?<![\w-])(?:"
    r"[sp]k-(?=[\w-]*\d)[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic, Langfuse (sk-proj-, sk-ant-api03-, sk-lf-, pk-lf-)
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}|glpat-[\w-]{20,}"  # GitHub, GitLab
    r"|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|AIza[\w-]{35}"  # Google
    r"|xox[abprs]-(?=[\w-]*\d)[\w-]{10,}"  # Slack
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"  # a JSON Web Token
    r"|(?<=Bearer )(?=[\w.~+/=-]*\d)[\w.~+/=-]{16,}"  # an Authorization header's token
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
    r")(?![\w-])"
)
"""API keys and tokens of well-known formats: a user may paste one into a request, where no variable of this
process holds it (`redact` masks only those)."""
PERSONAL_MASKS = {
    "key": "[KEY]", "email": "[EMAIL]", "iban": "[IBAN]", "card": "[CARD]", "ip": "[IP]", "phone": "[PHONE]",
}  # fmt: skip


def _luhn(digits: str) -> bool:
    total = 0
    for n, char in enumerate(reversed(digits)):
        value = int(char) * (2 if n % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _iban_ok(text: str) -> bool:
    compact = text.replace(" ", "")
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _ipv6_ok(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _phone_ok(text: str) -> bool:
    digits = sum(c.isdigit() for c in text)
    return 8 <= digits <= 15 and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip())


_CHECKS: tuple[tuple[str, re.Pattern[str], Callable[[str], bool]], ...] = (
    ("key", _KEY, lambda _m: True),  # first: a key's digits would otherwise read as a phone or card number
    ("email", _EMAIL, lambda _m: True),
    ("iban", _IBAN, _iban_ok),
    ("card", _CARD, lambda m: _luhn(re.sub(r"\D", "", m))),
    ("ip", _IPV4, lambda _m: True),
    ("ip", _IPV6, _ipv6_ok),
    ("phone", _PHONE, _phone_ok),
)


def redact_personal(text: str, *, patterns: Iterable[str] = ()) -> tuple[str, dict[str, int]]:
    """Return `text` with known secrets, personal data and the project's own `patterns` (regular expressions)
    masked, and how many of each kind were found. What is and is not caught: docs/production/index.md."""
    found: dict[str, int] = {}
    text = redact(text)

    def mask(kind: str, check: Callable[[str], bool]) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            if not check(match.group(0)):
                return match.group(0)
            found[kind] = found.get(kind, 0) + 1
            return PERSONAL_MASKS[kind]

        return replace

    for kind, pattern, check in _CHECKS:
        text = pattern.sub(mask(kind, check), text)
    for own in patterns:
        text, count = re.subn(own, MASK, text)
        if count:
            found["pattern"] = found.get("pattern", 0) + count
    return text, found


def redact_personal_value(value: Any, *, patterns: Iterable[str] = (), found: dict[str, int] | None = None) -> Any:
    """A JSON value with every string redacted by `redact_personal` and its lone surrogates replaced (U+FFFD);
    the kinds found are added to `found`."""
    from scoregate.support.storable import replace_surrogates

    counts = found if found is not None else {}
    kept = list(patterns)
    if isinstance(value, str):
        text, kinds = redact_personal(replace_surrogates(value)[0], patterns=kept)
        for kind, count in kinds.items():
            counts[kind] = counts.get(kind, 0) + count
        return text
    if isinstance(value, dict):
        return {
            redact_personal_value(str(k), patterns=kept, found=counts): redact_personal_value(
                v, patterns=kept, found=counts
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_personal_value(v, patterns=kept, found=counts) for v in value]
    return value


_KIND_WORDS = {"iban": "IBAN", "ip": "IP"}


def masked_words(found: dict[str, int]) -> str:
    """Return the counts `redact_personal` found in words, by kind: `1 email, 2 IBANs, 9 keys`."""
    return ", ".join(
        f"{count} {_KIND_WORDS.get(kind, kind)}{'' if count == 1 else 's'}" for kind, count in sorted(found.items())
    )
