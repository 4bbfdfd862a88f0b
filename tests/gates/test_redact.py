"""Redaction before storage: secret keys, secret-looking text, oversized payloads; our own ids survive."""

from __future__ import annotations

from custom_components.agentic_hems.gates.redact import MAX_ITEMS, MAX_STRING, REDACTED, redact, redact_text

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhYmNkZWYxMjM0NTYifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"


def test_secret_keys_and_text() -> None:
    record = {
        "raw_input": f"open the garage, my token is {JWT}",
        "candidate": {"params": {"api_key": "abc", "password": "hunter2", "tokens": 1234}},
        "evidence": {"headers": {"Authorization": "Bearer abcdefghijklmnop"}},
        "note": "key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX and ghp_0123456789abcdefghijABCDEFGHIJ",
        "idempotency_key": "a" * 64,
        "trace_id": "0123456789abcdef0123456789abcdef",
    }
    out = redact(record)
    assert out["raw_input"] == f"open the garage, my token is {REDACTED}"
    assert out["candidate"]["params"] == {"api_key": REDACTED, "password": REDACTED, "tokens": 1234}
    assert out["evidence"]["headers"] == {"Authorization": REDACTED}
    assert out["note"] == f"key {REDACTED} and {REDACTED}"
    assert out["idempotency_key"] == "a" * 64 and out["trace_id"] == record["trace_id"]
    assert record["candidate"]["params"]["password"] == "hunter2"  # a copy


def test_plain_text_survives() -> None:
    text = "turn on the kitchen light at 21:30, brightness 80 %, entity light.kitchen_main"
    assert redact_text(text) == text


def test_oversized_payloads_are_cut() -> None:
    out = redact({"raw_input": "x " * MAX_STRING, "items": list(range(MAX_ITEMS + 7))})
    assert out["raw_input"].endswith(f"... [{2 * MAX_STRING - MAX_STRING} characters cut]")
    assert len(out["raw_input"]) < MAX_STRING + 40
    assert out["items"][-1] == "[7 items cut]" and len(out["items"]) == MAX_ITEMS + 1
    deep: dict[str, object] = {}
    node = deep
    for _ in range(30):
        node["x"] = {}
        node = node["x"]  # type: ignore[assignment]
    assert "[nested too deep]" in str(redact(deep))


def test_caller_data_cannot_hide_behind_keys() -> None:
    """Found by a break test: secrets as keys, under our id keys, or as password=... in free text."""
    candidate = {
        "intent": "turn_on",
        "sk-abcdefghijklmnopqrstuvwx": 1,
        "trace_id": "sk-abcdefghijklmnopqrstuvwx",
        "params": {"user_id": JWT, "config_entry_id": "01JABCDEFGHJKMNPQRSTVWXYZ0"},
    }
    out = redact({"candidate": candidate, "raw_input": "my password=hunter2pass and token: abc123"})
    assert out["candidate"] == {
        "intent": "turn_on",
        f"{REDACTED}#1": 1,
        "trace_id": REDACTED,
        "params": {"user_id": REDACTED, "config_entry_id": "01JABCDEFGHJKMNPQRSTVWXYZ0"},
    }
    assert out["raw_input"] == f"my password={REDACTED} and token: {REDACTED}"
    assert "sk-abc" not in str(out) and "hunter2" not in str(out)
