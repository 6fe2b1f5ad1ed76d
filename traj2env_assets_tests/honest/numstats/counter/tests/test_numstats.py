import pytest
from numstats import mean, median, mode, value_range, variance


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


def test_mode_of_most_frequent_value():
    assert mode([3, 1, 3, 2, 3, 1]) == 3


def test_mode_tie_takes_smallest():
    assert mode([4, 4, 2, 2, 9]) == 2
    assert mode([5, 3, 1]) == 1


def test_value_range():
    assert value_range([3, -2, 10, 4]) == 12
    assert value_range([7]) == 0


def test_variance_is_population_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4
    assert variance([1, 2, 3, 4]) == 1.25
    assert variance([5]) == 0


@pytest.mark.parametrize("function", [mode, value_range, variance])
def test_new_statistics_of_empty_list_raise(function):
    with pytest.raises(ValueError):
        function([])
