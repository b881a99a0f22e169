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


KEYS_NOT_IN_THE_ENVIRONMENT = [
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7CD0EF",  # OpenAI
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-abcdefghij",  # Anthropic
    "sk-lf-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",  # Langfuse secret key
    "pk-lf-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",  # Langfuse public key
    "AKIAIOSFODNN7EXAMPLE",  # AWS access key id
    "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",  # GitHub token
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
    "glpat-AbCdEfGh1234567890Ij",  # GitLab token
    "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",  # Stripe
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",  # Google API key
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",  # Slack
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",  # Hugging Face
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",  # a JWT
]


@pytest.mark.parametrize("key", KEYS_NOT_IN_THE_ENVIRONMENT)
def test_an_api_key_a_user_pasted_into_a_trace_is_masked_though_no_variable_holds_it(key: str) -> None:
    masked, found = redact_personal(f"Caller: my key is {key}, please check")
    assert key not in masked and key[-12:] not in masked, masked
    assert masked == "Caller: my key is [KEY], please check"
    assert found == {"key": 1}


def test_bearer_tokens_and_private_keys_are_masked() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----"
    masked, found = redact_personal(f"Authorization: Bearer a1B2c3D4e5F6g7H8i9J0k1L2 and\n{pem}\nthanks")
    assert masked == "Authorization: Bearer [KEY] and\n[KEY]\nthanks"
    assert found == {"key": 2}


def test_words_that_only_look_like_key_prefixes_are_left_alone() -> None:
    text = "task-force-management-strategy-review, sk-ii skincare, AKIA is a name, eyJ alone, ghp_short, Bearer of news"
    masked, found = redact_personal(text)
    assert masked == text
    assert found == {}


def test_the_counts_of_what_was_masked_read_as_words_that_agree_with_them() -> None:
    from scoregate.support.redaction import masked_words

    found = {"key": 9, "email": 1, "iban": 2, "ip": 1, "pattern": 3, "phone": 1}
    assert masked_words(found) == "1 email, 2 IBANs, 1 IP, 9 keys, 3 patterns, 1 phone"
