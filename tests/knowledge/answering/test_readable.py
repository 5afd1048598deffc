"""Passages read as text: the Markdown marks the parsers write are left out, the words and
the code are not (knowledge/answering/readable.py)."""

from __future__ import annotations

from knowledge.answering.readable import passage_blocks, readable

MANUAL = """## functools — Higher-order functions

generic function
: A function composed of multiple functions.

See the `functools.singledispatch()` decorator and **PEP 443**; *new in 3.4*.

```
# a comment, not a heading
>>> f(*args, **kwargs)  # **kept**
```
Cost: a * b and x*y*z."""


PROSE = (
    "functools — Higher-order functions\n\n"
    "generic function\n"
    "A function composed of multiple functions.\n\n"
    "See the functools.singledispatch() decorator and PEP 443; new in 3.4."
)
CODE = "# a comment, not a heading\n>>> f(*args, **kwargs)  # **kept**"


def test_marks_are_left_out_and_code_is_set_apart_as_it_is():
    assert passage_blocks(MANUAL) == [
        (False, PROSE),
        (True, CODE),
        (False, "Cost: a * b and x*y*z."),
    ]


def test_without_room_for_blocks_the_passage_is_one_text():
    assert readable(passage_blocks(MANUAL)) == f"{PROSE}\n{CODE}\nCost: a * b and x*y*z."


def test_plain_text_is_unchanged():
    text = "The harbour crane was repaired by Marta Olsen in March.\n\nIt works."
    assert passage_blocks(text) == [(False, text)]
    assert readable(passage_blocks(text)) == text
