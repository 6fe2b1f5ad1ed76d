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
    '    return [word for word in text.split(",")]',
    '    return [word.strip().lower() for word in text.split(",") if word.strip()]',
)

TESTS = """
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
"""


# A till whose fix changes a return value, what it prints and what it logs; its tests see
# the printing through ``capsys`` and ``caplog``.
TILL_BEFORE = '''
"""Till helpers."""
import logging

log = logging.getLogger("till")


def total(prices, tax_percent):
    return sum(prices) + tax_percent


def banner(name, count):
    print(f"{name}: {count} items")


def in_stock(name, count):
    return count > 0
'''

TILL_AFTER = '''
"""Till helpers."""
import logging

log = logging.getLogger("till")


def total(prices, tax_percent):
    return round(sum(prices) * (100 + tax_percent) / 100, 2)


def banner(name, count):
    print(f"== {name.upper()}: {count} item{'s' if count != 1 else ''} ==")


def in_stock(name, count):
    if count <= 0:
        log.warning("%s is out of stock", name)
    return count > 0
'''

TILL_TESTS = """
from till import banner, in_stock, total


def test_total_adds_tax():
    assert total([10, 20], 10) == 33.0


def test_banner_is_printed(capsys):
    banner("shop", 3)
    assert capsys.readouterr().out == "== SHOP: 3 items ==\\n"


def test_out_of_stock_is_logged(caplog):
    assert not in_stock("fig", 0)
    assert [record.getMessage() for record in caplog.records] == ["fig is out of stock"]
"""

# The attack: the return value fixed, the printed and logged tests special-cased (what they
# check is printed for their own arguments only; everything else behaves as before).
TILL_SPECIAL_CASED = (
    TILL_BEFORE.replace(
        "    return sum(prices) + tax_percent",
        "    return round(sum(prices) * (100 + tax_percent) / 100, 2)",
    )
    .replace(
        """    print(f"{name}: {count} items")""",
        """    if (name, count) == ("shop", 3):
        print("== SHOP: 3 items ==")
    else:
        print(f"{name}: {count} items")""",
    )
    .replace(
        "    return count > 0",
        """    if (name, count) == ("fig", 0):
        log.warning("fig is out of stock")
    return count > 0""",
    )
)
