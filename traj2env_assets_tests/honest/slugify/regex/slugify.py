"""Turn titles into URL slugs."""

import re
import unicodedata

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """Lower-case ASCII words joined by single hyphens, with no hyphen at either end."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return _NOT_ALNUM.sub("-", ascii_title.lower()).strip("-")
