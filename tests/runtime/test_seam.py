"""The model seam: no vendor is named in the runtime outside the client module.

Everything that depends on who serves the model lives in runtime/openai_client.py (and its wire
format, runtime/openai_wire.py, its key's keeping, runtime/openai_key.py, its settings,
runtime/openai_settings.py, and its reading of a reply, runtime/openai_reply.py; its HTTP is
runtime/http_deadline.py's, which names no vendor). Elsewhere the runtime may say which protocol
it speaks ("OpenAI-compatible") and import the client by
its name, and nothing more: no vendor, product or model family, in code or in prose.
"""

from __future__ import annotations

import re
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
CLIENT = {RUNTIME / f"openai_{part}.py" for part in ("client", "wire", "key", "settings", "reply")}
VENDORS = re.compile(
    r"openai|anthropic|claude|gpt|llama|ollama|vllm|mistral|gemini|smollm|hugging\s?face|"
    r"cohere|deepseek|qwen|bedrock|azure",
    re.IGNORECASE,
)
# The protocol's name, and the client's own names where it is imported and built.
ALLOWED = re.compile(r"OpenAI-compatible|runtime\.openai_client|OpenAIClient")


def mentions(path: Path) -> list[str]:
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if VENDORS.search(ALLOWED.sub("", line)):
            found.append(f"{path.name}:{number}: {line.strip()}")
    return found


def test_no_vendor_is_named_in_the_runtime_outside_the_client_module() -> None:
    files = [p for p in RUNTIME.rglob("*.py") if p not in CLIENT]
    assert len(files) > 20  # the scan really scans the runtime
    assert [m for p in files for m in mentions(p)] == []


def test_the_audit_sees_a_vendor_where_one_is_named(tmp_path: Path) -> None:
    sample = RUNTIME / "__init__.py"
    probe = tmp_path / "probe.py"
    probe.write_text('CLIENT = "OpenAIClient"\nMODEL = "SmolLM2"  # a vendor named\n')
    found = [m.split(": ", 1)[1] for m in mentions(probe)]
    assert found == ['MODEL = "SmolLM2"  # a vendor named']
    assert mentions(sample) == []
