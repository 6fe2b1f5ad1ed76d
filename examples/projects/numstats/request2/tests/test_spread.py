import pytest

from numstats import mode, value_range, variance


def test_mode_picks_the_most_frequent_value():
    assert mode([3, 1, 3, 2, 3, 1]) == 3


def test_mode_breaks_ties_with_the_smallest_value():
    assert mode([4, 2, 4, 2, 9]) == 2


def test_mode_of_one_value():
    assert mode([6]) == 6


def test_mode_of_empty_list_raises():
    with pytest.raises(ValueError):
        mode([])


def test_range_of_unsorted_values():
    assert value_range([4, -2, 10, 3]) == 12


def test_range_of_one_value_is_zero():
    assert value_range([5]) == 0


def test_range_of_empty_list_raises():
    with pytest.raises(ValueError):
        value_range([])


def test_variance_of_spread_values():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4


def test_variance_of_equal_values_is_zero():
    assert variance([3, 3, 3]) == 0


def test_variance_of_two_values():
    assert variance([1, 4]) == 2.25


def test_variance_of_empty_list_raises():
    with pytest.raises(ValueError):
        variance([])
