"""detect-secrets plugins for keys its own release does not know (loaded by file path, the
way detect-secrets loads custom plugins; see ``traj2env_assets.harbor.secrets``)."""

from __future__ import annotations

import re

from detect_secrets.plugins.base import RegexBasedDetector


class AnthropicKeyDetector(RegexBasedDetector):
    """Anthropic API and admin keys (``sk-ant-api03-…``, ``sk-ant-admin01-…``): detect-secrets
    1.5 sees them only as a quoted high-entropy string, so one pasted into a prompt's prose
    would pass unseen."""

    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{32,}"),)
