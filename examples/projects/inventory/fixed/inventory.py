"""Stock levels per product, and what to reorder."""

import json
from dataclasses import dataclass


@dataclass
class Item:
    sku: str
    on_hand: int
    reorder_at: int


def load_items(text: str) -> list[Item]:
    rows = json.loads(text)
    return [Item(**row) for row in rows]


def to_reorder(items: list[Item]) -> list[str]:
    """SKUs at or below their reorder level, in order."""
    return [
        item.sku
        for item in items
        if item.on_hand <= item.reorder_at and item.sku is not None
    ]
