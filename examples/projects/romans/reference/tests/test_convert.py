import pytest

from romans import InvalidRomanNumeral, from_roman, to_roman


@pytest.mark.parametrize(
    ("number", "numeral"),
    [(1, "I"), (3, "III"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"),
     (400, "CD"), (944, "CMXLIV"), (1994, "MCMXCIV"), (3999, "MMMCMXCIX")],
)
def test_to_roman_known_values(number, numeral):
    assert to_roman(number) == numeral


def test_from_roman_known_values():
    assert from_roman("MCMXCIV") == 1994
    assert from_roman("XLII") == 42
    assert from_roman("I") == 1


def test_from_roman_ignores_case_and_whitespace():
    assert from_roman("  mmxxvi ") == 2026


def test_round_trip_every_number():
    for number in range(1, 4000):
        assert from_roman(to_roman(number)) == number


@pytest.mark.parametrize("number", [0, -1, 4000])
def test_to_roman_rejects_out_of_range(number):
    with pytest.raises(ValueError):
        to_roman(number)


@pytest.mark.parametrize("value", [2.5, "12", True])
def test_to_roman_rejects_non_integers(value):
    with pytest.raises(TypeError):
        to_roman(value)


@pytest.mark.parametrize("text", ["", "   ", "IIII", "IC", "VX", "MMMM", "ABC", "XIV!"])
def test_from_roman_rejects_non_standard_numerals(text):
    with pytest.raises(InvalidRomanNumeral):
        from_roman(text)


def test_invalid_numeral_is_a_value_error():
    assert issubclass(InvalidRomanNumeral, ValueError)
