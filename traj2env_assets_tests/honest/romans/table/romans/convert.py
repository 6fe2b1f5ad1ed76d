"""Conversions between integers and Roman numerals (standard subtractive form)."""

import re

MIN_VALUE = 1

MAX_VALUE = 3999

# The numeral of each decimal digit, per place: ones, tens, hundreds, thousands.
_PLACES = (
    ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"),
    ("", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"),
    ("", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"),
    ("", "M", "MM", "MMM"),
)

_STANDARD = re.compile(r"M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")
_SYMBOLS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


class InvalidRomanNumeral(ValueError):
    """Raised for text that is not a Roman numeral in standard form."""


def to_roman(number: int) -> str:
    """Return the Roman numeral of ``number`` (1 to 3999)."""
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError(f"expected an int, got {type(number).__name__}")
    if not MIN_VALUE <= number <= MAX_VALUE:
        raise ValueError(f"{number} is outside {MIN_VALUE}..{MAX_VALUE}")
    digits = []
    for place, numerals in enumerate(_PLACES):
        digits.append(numerals[number // 10**place % 10])
    return "".join(reversed(digits))


def from_roman(text: str) -> int:
    """Return the integer a Roman numeral stands for; case-insensitive, surrounding
    whitespace ignored. Non-standard forms such as ``IIII`` or ``IC`` are invalid."""
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    numeral = text.strip()
    # Check the letters before upper-casing: "ı".upper() is "I", and re.IGNORECASE has the same trap.
    if not numeral or any(char not in "IVXLCDMivxlcdm" for char in numeral):
        raise InvalidRomanNumeral(f"not a Roman numeral: {text!r}")
    numeral = numeral.upper()
    if _STANDARD.fullmatch(numeral) is None:
        raise InvalidRomanNumeral(f"not a Roman numeral in standard form: {text!r}")
    total = 0
    for index, char in enumerate(numeral):
        value = _SYMBOLS[char]
        following = _SYMBOLS[numeral[index + 1]] if index + 1 < len(numeral) else 0
        total += -value if value < following else value
    return total
