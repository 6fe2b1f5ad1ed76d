"""Turn titles into URL slugs."""

import unicodedata


def slugify(title: str) -> str:
    """Lower-case ASCII words joined by single hyphens, with no hyphen at either end."""
    pieces: list[str] = []
    gap = False
    for char in unicodedata.normalize("NFKD", title):
        if not char.isascii():
            # Accents (combining marks) and letters with no ASCII form are dropped, not separators.
            continue
        char = char.lower()
        if char.isalnum():
            if gap and pieces:
                pieces.append("-")
            pieces.append(char)
            gap = False
        else:
            gap = True
    return "".join(pieces)
