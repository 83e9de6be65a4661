"""Text that draws nothing: a stated reason or statement made only of such characters says
nothing where it is read (the audit, a card, a run's header), though it passes "not blank".

Here, below the pages, the API and the services, so that every door asks the same question:
the pages' decision forms and the API's bodies (dashboard/) and the services that take a
person's words from commands too (services/intents.py).
"""

from __future__ import annotations

import unicodedata

# Characters that draw nothing where a reason is read (the audit, a card): every control,
# format character (U+200B, U+2060, U+FEFF, the bidi marks), surrogate, private-use and
# unassigned code point, and every space and line or paragraph separator.
UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
# And the letters and marks that draw nothing though their category says otherwise: Unicode's
# default-ignorable ones outside the categories above (the Hangul fillers, the combining
# grapheme joiner, the variation selectors), and the blank braille pattern.
UNSEEN = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(map(chr, [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]))
)


def unseen_reason(text: str, what: str = "reason", ask: str = "say why in words") -> str | None:
    """Why `text` says nothing as a reason (or as `what` else), naming the characters it
    holds, when none of them can be seen (a reason of only U+200B passed the pages' and the
    API's "not blank", and the audit showed an empty why); None when one can. An empty text
    is the caller's to refuse as missing."""
    if not text or any(visible(ch) for ch in text):
        return None
    held = list(dict.fromkeys(text))
    named = ", ".join(code_point(ch) for ch in held[:3]) + (", …" if len(held) > 3 else "")
    return f"the {what} holds no character that can be seen (only {named}): {ask}"


def visible(ch: str) -> bool:
    return ch not in UNSEEN and unicodedata.category(ch) not in UNSEEN_CATEGORIES


def code_point(ch: str) -> str:
    """U+200B (ZERO WIDTH SPACE): a character named as the Unicode standard names it."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")
