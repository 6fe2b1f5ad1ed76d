"""Merge closed integer intervals and measure how much of the line they cover."""


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return the sorted union of closed intervals; touching intervals are merged."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        # Closed intervals that share an endpoint touch, so they merge too (<=, not <).
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def covered_length(intervals: list[tuple[int, int]]) -> int:
    """Total length of the line covered by at least one interval."""
    return sum(end - start for start, end in merge_intervals(intervals))
