"""The one cleaner of quoted text, in each of the three ways its callers use it."""

from __future__ import annotations

from system.llm.quoted_text import CONTROL_AND_FORMAT, strip_invisible

HOSTILE = "a\x00b\x1b[31mc\u200bd\u202ee\tf\ng\rh\u2028i\ue000j\U000e0001k\u0378l"


def test_printable_text_comes_back_unchanged():
    text = "Ada Lovelace wrote the first algorithm — «naïve» 🙂"
    assert strip_invisible(text) is text
    assert strip_invisible(text, to_space=True) is text


def test_inside_a_prompt_block_line_breaks_and_tabs_stay_and_the_rest_goes():
    # knowledge/answering/prompt.py: control, format, private-use and unassigned out.
    assert strip_invisible(HOSTILE, keep="\n\t") == "ab[31mcde\tf\ngh\u2028ijkl"


def test_on_one_line_every_break_becomes_a_space():
    # knowledge/retrieval/context.py, the query, the `search` command.
    assert strip_invisible(HOSTILE, to_space=True) == "ab[31mcde f g h ijkl"


def test_for_a_terminal_only_control_and_format_characters_go():
    # The `ask` command: private-use and unassigned characters are left to the terminal.
    cleaned = strip_invisible(HOSTILE, keep="\n", drop=CONTROL_AND_FORMAT)
    assert cleaned == "ab[31mcdef\ngh\u2028i\ue000jk\u0378l"
