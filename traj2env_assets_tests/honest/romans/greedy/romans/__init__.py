"""Roman numerals: convert integers from 1 to 3999 to Roman numerals and back."""

from .convert import InvalidRomanNumeral, from_roman, to_roman

__all__ = ["InvalidRomanNumeral", "from_roman", "to_roman"]
