from stats import mean, median, percentile, stdev, value_range, variance, zscores


def test_mean_returns_a_number():
    assert isinstance(mean([1, 2, 3]), float)


def test_median_of_one_value():
    assert median([5]) == 5


def test_variance_is_not_negative():
    assert variance([1, 2, 3]) >= 0


def test_stdev_is_not_negative():
    assert stdev([4, 4, 5]) >= 0


def test_range_of_equal_values():
    assert value_range([7, 7]) == 0


def test_percentile_returns_a_number():
    assert isinstance(percentile([1, 2, 3], 0.5), (int, float))


def test_zscores_one_per_value():
    assert len(zscores([1, 2, 3])) == 3
