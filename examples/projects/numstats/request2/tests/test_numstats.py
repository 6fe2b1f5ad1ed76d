import pytest

from numstats import mean, median


def test_mean_of_integers():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_of_one_value():
    assert mean([7]) == 7


def test_mean_of_empty_list_raises():
    with pytest.raises(ValueError):
        mean([])


def test_median_of_odd_count():
    assert median([5, 1, 3]) == 3


def test_median_of_even_count():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_of_empty_list_raises():
    with pytest.raises(ValueError):
        median([])
