"""A before-image derived from an edit reported after it was made is kept only when it is the
only one that fits (core/derive.py)."""

from __future__ import annotations

from takeback.core.derive import gives, only_fit, reversed_uniquely


def test_a_new_text_that_occurs_once_reverses_uniquely() -> None:
    assert reversed_uniquely("a\nB\nc\n", [("b", "B")]) == "a\nb\nc\n"
    assert reversed_uniquely("X Y\n", [("x", "X"), ("y", "Y")]) == "x y\n"  # last edit first


def test_a_new_text_that_occurs_twice_or_is_empty_does_not_reverse() -> None:
    assert reversed_uniquely("a\na\n", [("b", "a")]) is None
    assert reversed_uniquely("ac", [("b", "")]) is None
    assert reversed_uniquely("abc", []) is None


def test_a_known_version_fits_when_the_edits_made_on_it_give_the_file_now() -> None:
    assert gives("b\na\n", [("b", "a")], "a\na\n")
    assert not gives("a\nb\n", [("c", "a")], "a\na\n")  # no such old text
    assert gives("b\nb\n", [("b", "a")], "b\na\n")  # the second of two places
    assert not gives("x", [("", "y")], "yx")  # an insertion anywhere cannot be checked


def test_only_one_fit_is_kept_and_two_that_disagree_give_none() -> None:
    assert only_fit("a\na\n", [("b", "a")], ["b\na\n"]) == "b\na\n"
    assert only_fit("a\na\n", [("b", "a")], ["b\na\n", "a\nb\n"]) is None  # both fit: which one?
    assert only_fit("a\na\n", [("b", "a")], []) is None
    assert only_fit("a\nB\n", [("b", "B")], ["a\nb\n"]) == "a\nb\n"  # reversal and known agree
