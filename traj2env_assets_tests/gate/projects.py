"""Small projects of our own making for the behaviour gate's tests: a module before and
after a fix, and pytest tests that call it in every way the recorder knows."""

from __future__ import annotations

BEFORE = '''
"""Shopping helpers."""
from dataclasses import dataclass


def total(prices, discount=0):
    return sum(prices) - discount


def tags(text):
    return [word for word in text.split(",")]


class Basket:
    def __init__(self, owner):
        self.owner = owner
        self.items = []

    def add(self, name, price):
        self.items.append((name, price))
        return len(self.items)

    @property
    def size(self):
        return len(self.items)

    @staticmethod
    def label(name):
        return name.title()


@dataclass
class Line:
    name: str
    qty: int
'''

# The fix: tags are stripped and lower-cased, empty ones dropped.
AFTER = BEFORE.replace(
    "    return [word for word in text.split(\",\")]",
    "    return [word.strip().lower() for word in text.split(\",\") if word.strip()]",
)

TESTS = '''
from shop import Basket, Line, tags, total


def test_total_with_discount():
    assert total([3, 4], discount=2) == 5


def test_tags_are_clean():
    assert tags(" Red, blue ,,GREEN") == ["red", "blue", "green"]


def test_tags_of_one_word():
    assert tags("Solo") == ["solo"]


def test_basket_counts_items():
    basket = Basket("ann")
    assert basket.add("pear", 2) == 1
    assert basket.add("fig", 3) == 2
    assert basket.size == 2
    assert Basket.label("big fig") == "Big Fig"


def test_line_holds_quantity():
    assert Line("pear", 3).qty == 3


def test_a_callback_is_not_plain_data():
    assert sorted(tags("b,a"), key=lambda word: word) == ["a", "b"]
    assert total(map(int, "12")) == 3
'''
