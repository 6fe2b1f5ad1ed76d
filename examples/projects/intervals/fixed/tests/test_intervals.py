from intervals import covered_length, merge_intervals


def test_empty_input():
    assert merge_intervals([]) == []


def test_disjoint_intervals_stay_apart():
    assert merge_intervals([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_overlapping_intervals_merge():
    assert merge_intervals([(1, 4), (2, 6)]) == [(1, 6)]


def test_touching_intervals_merge():
    assert merge_intervals([(1, 3), (3, 5)]) == [(1, 5)]


def test_chain_of_touching_intervals_merges_into_one():
    assert merge_intervals([(3, 4), (1, 2), (2, 3)]) == [(1, 4)]


def test_covered_length_counts_overlap_once():
    assert covered_length([(0, 4), (2, 6), (10, 11)]) == 7
