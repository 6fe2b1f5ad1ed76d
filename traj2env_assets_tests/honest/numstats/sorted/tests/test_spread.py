import pytest
from numstats import mode, value_range, variance


class TestMode:
    def test_single_winner(self):
        assert mode([1, 2, 2, 3]) == 2

    def test_tie_goes_to_the_smallest(self):
        assert mode([3, 3, 1, 1, 2]) == 1

    def test_all_distinct(self):
        assert mode([9, 7, 8]) == 7

    def test_floats(self):
        assert mode([0.5, 1.5, 0.5]) == 0.5

    def test_empty(self):
        with pytest.raises(ValueError):
            mode([])


class TestValueRange:
    def test_spread(self):
        assert value_range([4, 9, 1, 6]) == 8

    def test_negative_values(self):
        assert value_range([-3, -10]) == 7

    def test_empty(self):
        with pytest.raises(ValueError):
            value_range([])


class TestVariance:
    def test_population_variance(self):
        assert variance([1, 2, 3, 4, 5]) == 2

    def test_floats(self):
        assert variance([1.5, 2.5]) == pytest.approx(0.25)

    def test_constant_list(self):
        assert variance([3, 3, 3]) == 0

    def test_empty(self):
        with pytest.raises(ValueError):
            variance([])
