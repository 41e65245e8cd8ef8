"""Characters that change how text reads without being seen: which ones, and their escapes.

An agent's text can hold characters a person does not see: direction controls that reorder
what follows (Trojan Source: a string that reads as a comment), zero-width and other
format characters, and control characters. The lab extension shows each as a visible escape
on every card and in every diff, and a shell command that holds a direction control is
refused (docs/security.md, "Cards and diffs").

Which characters these are is one list, ``hiddenCharacters`` in ``schemas/vocabulary.json``,
read here and, through the generated types, by the lab extension. Pure: no I/O after import.
"""

from __future__ import annotations

import re

from .vocabulary import VOCABULARY

#: A character that reorders the text around it (``hiddenCharacters.bidi``).
BIDI = "bidi"
#: A format, zero-width or other default-ignorable character (``hiddenCharacters.invisible``).
INVISIBLE = "invisible"
#: A control character other than tab and line feed (``hiddenCharacters.control``).
CONTROL = "control"


def ranges(kind: str) -> list[tuple[int, int]]:
    """The code point ranges of one kind, ``(first, last)`` inclusive, as the vocabulary
    lists them (``"202A..202E"`` or a single ``"061C"``)."""
    found = []
    for item in VOCABULARY["hiddenCharacters"][kind]:
        first, _, last = item.partition("..")
        found.append((int(first, 16), int(last or first, 16)))
    return found


def _pattern(kinds: tuple[str, ...]) -> re.Pattern[str]:
    spans = "".join(f"\\U{a:08x}-\\U{b:08x}" for k in kinds for a, b in ranges(k))
    return re.compile(f"[{spans}]")


_BIDI = _pattern((BIDI,))
_HIDDEN = _pattern((BIDI, INVISIBLE, CONTROL))


def bidi_controls(text: str) -> list[str]:
    """The direction controls in ``text``, in order (empty when there is none)."""
    return _BIDI.findall(text)


def hidden_characters(text: str) -> list[str]:
    """Every character of ``text`` that a card shows as an escape, in order."""
    return _HIDDEN.findall(text)


def escape_of(char: str) -> str:
    """The visible form of one hidden character: ``⟨U+202E⟩``."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def escaped(text: str) -> str:
    """``text`` with every hidden character replaced by its visible form."""
    return _HIDDEN.sub(lambda m: escape_of(m.group()), text)
