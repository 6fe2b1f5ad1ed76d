import pytest
from romans import InvalidRomanNumeral, from_roman, to_roman
from romans.convert import MAX_VALUE, MIN_VALUE


def test_bounds():
    assert (MIN_VALUE, MAX_VALUE) == (1, 3999)


def test_to_roman_examples():
    assert [to_roman(n) for n in (1, 3, 4, 5, 9, 10, 49, 99, 444, 1666, 3999)] == [
        "I", "III", "IV", "V", "IX", "X", "XLIX", "XCIX", "CDXLIV", "MDCLXVI", "MMMCMXCIX",
    ]


def test_from_roman_examples():
    assert from_roman("MMXXVI") == 2026
    assert from_roman("cdxliv") == 444
    assert from_roman("\t XLII ") == 42


def test_every_number_survives_a_round_trip():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 4000))


def test_numbers_outside_the_range_raise():
    for number in (0, 4000, -5):
        with pytest.raises(ValueError):
            to_roman(number)


def test_non_standard_forms_raise_a_value_error():
    for text in ("IIII", "IC", "XXXX", "DD", "LC", "IXI", "MMMM", "", "hello", "12"):
        with pytest.raises(InvalidRomanNumeral):
            from_roman(text)
        with pytest.raises(ValueError):
            from_roman(text)
