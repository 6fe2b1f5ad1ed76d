"""Mutants made with ``ast``: which points mutate, which don't, and what a mutant looks like."""

from __future__ import annotations

from traj2env_assets.mutation import generate_mutants

SOURCE = '''"""A module docstring."""

LIMIT: int = 3


def scale(value: float, factor: float = 2.0) -> float:
    """Scale a value."""
    if value > LIMIT and factor != 0:
        return value * factor
    note = f"value {value}"
    return value - 1


def noop():
    return None
'''


def test_every_operator_has_mutants_and_each_changes_one_span() -> None:
    mutants = generate_mutants({"pkg/scale.py": SOURCE})
    operators = {mutant.operator for mutant in mutants}
    assert operators == {"arithmetic", "comparison", "boolean", "constant", "return_value", "removed_statement"}
    lines = SOURCE.splitlines()
    for mutant in mutants:
        changed = [i + 1 for i, (a, b) in enumerate(zip(lines, mutant.source.splitlines(), strict=False)) if a != b]
        assert changed and changed[0] == mutant.line
        compile(mutant.source, mutant.path, "exec")
    assert len({mutant.id for mutant in mutants}) == len(mutants)


def test_docstrings_annotations_and_fstrings_are_not_mutated() -> None:
    mutants = generate_mutants({"scale.py": SOURCE})
    descriptions = {(mutant.line, mutant.description) for mutant in mutants}
    assert not any(line in (1, 7) for line, _ in descriptions)  # docstrings
    assert (3, "3 -> 4") in descriptions  # the value of an annotated assignment is mutated
    assert (6, "2.0 -> 3.0") in descriptions  # a default value is
    assert not any("'value '" in description for _, description in descriptions)
    assert not any(line == 15 for line, _ in descriptions)  # `return None` stays


def test_only_lines_restricts_mutation_points() -> None:
    mutants = generate_mutants({"scale.py": SOURCE, "other.py": "X = 1\n"}, only_lines={"scale.py": {9}})
    assert mutants
    assert {(mutant.path, mutant.line) for mutant in mutants} == {("scale.py", 9)}
    assert {mutant.operator for mutant in mutants} == {"arithmetic", "return_value"}


def test_ids_depend_on_content_only() -> None:
    first = generate_mutants({"scale.py": SOURCE})
    again = generate_mutants({"scale.py": SOURCE, "notes.txt": "x", "broken.py": "def (:\n"})
    assert [mutant.id for mutant in first] == [mutant.id for mutant in again]
    moved = generate_mutants({"other.py": SOURCE})
    assert not {mutant.id for mutant in first} & {mutant.id for mutant in moved}
