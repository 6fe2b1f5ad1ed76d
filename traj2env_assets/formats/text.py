"""Flattening of message content blocks into ATIF text."""

from __future__ import annotations

from typing import Any


def blocks_to_text(content: Any) -> str:
    """Join the text of a string or a list of content blocks.

    Images are not copied into the trajectory (ATIF would need them as files);
    each becomes a ``[image: <type>]`` marker so the step still says one was there.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind in ("text", "input_text", "output_text"):
                parts.append(str(block.get("text", "")))
            elif kind in ("image", "input_image"):
                source = block.get("source")
                if not isinstance(source, dict):
                    source = {}
                media = source.get("media_type") or block.get("mimeType") or "image"
                parts.append(f"[image: {media}]")
            elif kind == "tool_result":
                parts.append(blocks_to_text(block.get("content")))
    return "\n".join(part for part in parts if part)
