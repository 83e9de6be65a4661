from textparse import parse


def test_fields_are_trimmed():
    assert parse(" a, b ,c") == ["a", "b", "c"]


def test_empty_input_has_no_fields():
    assert parse("") == []
