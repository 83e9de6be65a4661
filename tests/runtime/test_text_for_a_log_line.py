"""redact.for_log: a message the process did not write itself, fit for one log line."""

from __future__ import annotations

from runtime import redact

KEY = "sk-live-0123456789abcdef"


def test_secrets_and_userinfo_are_blanked_and_control_characters_escaped():
    text = f"GET http://u:p/w?d@host:8/v1 said {KEY}\nWARN forged\r\x1b[1m\u2028\u0085\ttab"
    shown = redact.for_log(text, [KEY, None, "x"])
    assert shown == (
        "GET http://***@host:8/v1 said [secret]\\nWARN forged\\r\\x1b[1m\\u2028\\x85\\ttab"
    )
    assert len(shown.splitlines()) == 1


def test_a_secret_cut_short_is_blanked_and_the_longer_of_two_first():
    assert redact.for_log(f"key: {KEY[:12]}...", [KEY]) == "key: [secret]..."
    assert redact.for_log(f"Bearer {KEY}", [KEY, f"Bearer {KEY}"]) == "[secret]"


def test_plain_text_is_left_as_it_is():
    text = "mail bob@example.com, see https://example.com/a and naïve café"
    assert redact.for_log(text) == text
    # An @ after a / may be a password's (as redact.without_userinfo reads a URL): blanked too,
    # rather than let a password holding a / through.
    assert redact.for_log("https://example.com/a@b c") == "https://***@b c"
