"""Summary statistics for lists of numbers."""

import statistics


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


def _require_values(values, name):
    if not values:
        raise ValueError(f"{name} of an empty list")


def mode(values):
    """The most frequent value; the smallest of them on a tie."""
    _require_values(values, "mode")
    ordered = sorted(values)
    # Walk the runs of equal values in ascending order; only a strictly longer run
    # replaces the best, so on a tie the smallest value wins.
    best, best_length = ordered[0], 0
    run_start = 0
    for index in range(1, len(ordered) + 1):
        if index == len(ordered) or ordered[index] != ordered[run_start]:
            if index - run_start > best_length:
                best, best_length = ordered[run_start], index - run_start
            run_start = index
    return best


def value_range(values):
    """The largest value minus the smallest."""
    _require_values(values, "value_range")
    smallest = largest = values[0]
    for value in values[1:]:
        if value < smallest:
            smallest = value
        elif value > largest:
            largest = value
    return largest - smallest


def variance(values):
    """The population variance (mean squared distance from the mean)."""
    _require_values(values, "variance")
    return statistics.pvariance(values)
