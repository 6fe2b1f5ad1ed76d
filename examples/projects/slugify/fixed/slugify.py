"""Turn titles into URL slugs."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Lower-case ASCII words joined by single hyphens, with no hyphen at either end."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
