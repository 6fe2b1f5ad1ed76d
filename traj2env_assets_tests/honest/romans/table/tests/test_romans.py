import pytest
from romans import InvalidRomanNumeral, from_roman, to_roman
from romans.convert import MAX_VALUE, MIN_VALUE


@pytest.mark.parametrize(
    ("number", "numeral"),
    [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"), (400, "CD"),
     (900, "CM"), (1994, "MCMXCIV"), (2024, "MMXXIV"), (3888, "MMMDCCCLXXXVIII"), (3999, "MMMCMXCIX")],
)
def test_known_values(number, numeral):
    assert to_roman(number) == numeral
    assert from_roman(numeral) == number


def test_round_trip_over_the_whole_range():
    assert MIN_VALUE == 1 and MAX_VALUE == 3999
    for number in range(MIN_VALUE, MAX_VALUE + 1):
        assert from_roman(to_roman(number)) == number


@pytest.mark.parametrize("number", [0, -1, 4000])
def test_out_of_range_numbers_are_rejected(number):
    with pytest.raises(ValueError):
        to_roman(number)


def test_case_and_surrounding_whitespace_are_ignored():
    assert from_roman("  mcmxciv\n") == 1994
    assert from_roman("xIv") == 14


@pytest.mark.parametrize("text", ["", "   ", "IIII", "VV", "IC", "IL", "XM", "VX", "MMMM", "IIV", "ABC", "X I", "Ⅻ", "xıv"])
def test_non_standard_numerals_are_rejected(text):
    with pytest.raises(InvalidRomanNumeral):
        from_roman(text)


def test_invalid_numeral_is_a_value_error():
    assert issubclass(InvalidRomanNumeral, ValueError)
