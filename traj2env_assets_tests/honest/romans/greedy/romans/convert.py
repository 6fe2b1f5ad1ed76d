"""Conversions between integers and Roman numerals (standard subtractive form)."""

MIN_VALUE = 1

MAX_VALUE = 3999

_PAIRS = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)
_LETTERS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


class InvalidRomanNumeral(ValueError):
    """Raised for text that is not a Roman numeral in standard form."""


def to_roman(number: int) -> str:
    """Return the Roman numeral of ``number`` (1 to 3999)."""
    if type(number) is bool or not isinstance(number, int):
        raise TypeError("to_roman() needs an int")
    if number < MIN_VALUE or number > MAX_VALUE:
        raise ValueError(f"only {MIN_VALUE} to {MAX_VALUE} have a Roman numeral, not {number}")
    parts = []
    remaining = number
    for value, symbol in _PAIRS:
        count, remaining = divmod(remaining, value)
        parts.append(symbol * count)
    return "".join(parts)


def from_roman(text: str) -> int:
    """Return the integer a Roman numeral stands for; case-insensitive, surrounding
    whitespace ignored. Non-standard forms such as ``IIII`` or ``IC`` are invalid."""
    if not isinstance(text, str):
        raise TypeError("from_roman() needs a str")
    numeral = text.strip()
    values = []
    for char in numeral:
        if not char.isascii() or char.upper() not in _LETTERS:
            raise InvalidRomanNumeral(f"{text!r} is not a Roman numeral")
        values.append(_LETTERS[char.upper()])
    if not values:
        raise InvalidRomanNumeral("an empty string is not a Roman numeral")
    total = 0
    for value, following in zip(values, values[1:] + [0]):
        total += -value if value < following else value
    # Any text reads as some number; it is standard only if it is that number's own numeral.
    if not MIN_VALUE <= total <= MAX_VALUE or to_roman(total) != numeral.upper():
        raise InvalidRomanNumeral(f"{text!r} is not a Roman numeral in standard form")
    return total
