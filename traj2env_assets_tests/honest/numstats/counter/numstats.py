"""Summary statistics for lists of numbers."""

from collections import Counter


def mean(values):
    """The arithmetic mean; ValueError on an empty list."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    """The middle value (the mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def mode(values):
    """The most frequent value; the smallest of them on a tie."""
    if not values:
        raise ValueError("mode of an empty list")
    counts = Counter(values)
    highest = max(counts.values())
    return min(value for value, count in counts.items() if count == highest)


def value_range(values):
    """The largest value minus the smallest."""
    if not values:
        raise ValueError("value_range of an empty list")
    return max(values) - min(values)


def variance(values):
    """The population variance (mean squared distance from the mean)."""
    if not values:
        raise ValueError("variance of an empty list")
    centre = mean(values)
    return sum((value - centre) ** 2 for value in values) / len(values)
