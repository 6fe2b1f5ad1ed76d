"""Merge closed integer intervals and measure how much of the line they cover."""


def _union_of_sorted(left: list[tuple[int, int]], right: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of two sorted lists of disjoint, non-touching intervals, in the same form."""
    result: list[tuple[int, int]] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j == len(right) or (i < len(left) and left[i] <= right[j]):
            start, end = left[i]
            i += 1
        else:
            start, end = right[j]
            j += 1
        if result and start <= result[-1][1]:
            last_start, last_end = result[-1]
            result[-1] = (last_start, max(last_end, end))
        else:
            result.append((start, end))
    return result


def _merge(items: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if len(items) <= 1:
        return [(start, end) for start, end in items]
    middle = len(items) // 2
    return _union_of_sorted(_merge(items[:middle]), _merge(items[middle:]))


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return the sorted union of closed intervals; touching intervals are merged."""
    return _merge(list(intervals))


def covered_length(intervals: list[tuple[int, int]]) -> int:
    """Total length of the line covered by at least one interval."""
    total = 0
    for start, end in merge_intervals(intervals):
        total += end - start
    return total
