"""Personal data is masked before production text touches disk: what is caught, and what is documented as not."""

from __future__ import annotations

import pytest

from scoregate.support.redaction import redact_personal


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ("write to jane.doe+news@example.co.uk today", "EMAIL", "jane.doe+news@example.co.uk"),
        ("card 4111 1111 1111 1111 please", "CARD", "4111 1111 1111 1111"),
        ("card 5500-0000-0000-0004", "CARD", "5500-0000-0000-0004"),
        ("IBAN DE89 3704 0044 0532 0130 00 ok", "IBAN", "DE89 3704 0044 0532 0130 00"),
        ("iban GB82WEST12345698765432", "IBAN", "GB82WEST12345698765432"),
        ("from 192.168.10.24 at noon", "IP", "192.168.10.24"),
        ("v6 2001:db8:85a3::8a2e:370:7334 here", "IP", "2001:db8:85a3::8a2e:370:7334"),
        ("call +1 (415) 555-0132 now", "PHONE", "+1 (415) 555-0132"),
        ("ruf an: 030 1234567", "PHONE", "030 1234567"),
        ("by phone at +44 20 7946 0958. The form", "PHONE", "0958"),  # the sentence ends right after it
        ("my card is 5500 0000 0000 0004.", "CARD", "0004"),
        ("it came from 10.20.30.40.", "IP", "10.20.30.40"),
    ],
)
def test_each_kind_of_personal_data_is_masked_and_counted(text: str, kind: str, secret: str) -> None:
    masked, found = redact_personal(text)
    assert secret not in masked
    assert f"[{kind}]" in masked
    assert found == {kind.lower(): 1}


def test_a_card_number_failing_the_luhn_check_and_short_numbers_are_left_alone() -> None:
    text = "order 4111 1111 1111 1112, version 3.12.1, 2026-11-29, room 1234, release 1.2.3.4.5"
    masked, found = redact_personal(text)
    assert masked == text
    assert found == {}


def test_an_iban_with_a_bad_checksum_is_not_an_iban() -> None:
    _, found = redact_personal("DE00 3704 0044 0532 0130 00")
    assert "iban" not in found


def test_the_projects_own_patterns_are_masked_too() -> None:
    masked, found = redact_personal("ticket CUST-99812 from Jane", patterns=[r"CUST-\d+"])
    assert masked == "ticket [REDACTED] from Jane"
    assert found == {"pattern": 1}


def test_known_secrets_are_masked_with_the_personal_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnopqrstuvwxyz0123")
    masked, _ = redact_personal("key sk-test-abcdefghijklmnopqrstuvwxyz0123 and bob@example.com")
    assert "sk-test" not in masked and "bob@example.com" not in masked
