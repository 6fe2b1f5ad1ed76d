"""Conversions between integers and Roman numerals (standard subtractive form)."""

MIN_VALUE = 1
MAX_VALUE = 3999

_NUMERALS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),
    (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
    (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)


class InvalidRomanNumeral(ValueError):
    """Raised for text that is not a Roman numeral in standard form."""


def to_roman(number: int) -> str:
    """Return the Roman numeral of ``number`` (1 to 3999)."""
    if not isinstance(number, int) or isinstance(number, bool):
        raise TypeError("number must be an int")
    if number < MIN_VALUE or number > MAX_VALUE:
        raise ValueError(f"number must be between {MIN_VALUE} and {MAX_VALUE}")
    parts = []
    remaining = number
    for value, numeral in _NUMERALS:
        count, remaining = divmod(remaining, value)
        parts.append(numeral * count)
    return "".join(parts)


def from_roman(text: str) -> int:
    """Return the integer a Roman numeral stands for; case-insensitive, surrounding
    whitespace ignored. Non-standard forms such as ``IIII`` or ``IC`` are invalid."""
    numeral = text.strip().upper()
    if not numeral:
        raise InvalidRomanNumeral("empty numeral")
    total = 0
    index = 0
    for value, symbol in _NUMERALS:
        while numeral.startswith(symbol, index):
            total += value
            index += len(symbol)
    if index != len(numeral) or total > MAX_VALUE or to_roman(total) != numeral:
        raise InvalidRomanNumeral(f"not a standard Roman numeral: {text!r}")
    return total
