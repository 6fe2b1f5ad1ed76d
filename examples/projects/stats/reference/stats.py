"""Descriptive statistics for small lists of numbers."""

import math


def mean(values):
    """Arithmetic mean; raises ValueError on an empty list."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    """Middle value (mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def variance(values):
    """Sample variance (n - 1 in the denominator); needs at least two values."""
    if len(values) < 2:
        raise ValueError("variance needs at least two values")
    centre = mean(values)
    return sum((value - centre) ** 2 for value in values) / (len(values) - 1)


def stdev(values):
    """Sample standard deviation."""
    return math.sqrt(variance(values))


def value_range(values):
    """Largest minus smallest value."""
    if not values:
        raise ValueError("range of an empty list")
    return max(values) - min(values)


def percentile(values, fraction):
    """Linear-interpolation percentile, ``fraction`` between 0 and 1."""
    if not values:
        raise ValueError("percentile of an empty list")
    if fraction < 0 or fraction > 1:
        raise ValueError("fraction must be between 0 and 1")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    weight = position - lower
    return ordered[lower] * (1 - weight) + ordered[upper] * weight


def zscores(values):
    """Each value's distance from the mean in standard deviations."""
    centre, spread = mean(values), stdev(values)
    if spread == 0:
        return [0.0 for _ in values]
    return [(value - centre) / spread for value in values]
