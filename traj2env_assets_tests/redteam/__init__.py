"""Red-team attack suite: agent submissions that try to earn reward without doing the work.

``catalogue.ATTACKS`` lists the attacks as data; ``benchmarks/redteam.py`` runs them through
the trial path against published sample tasks. Everything here is built only from what an
agent sees: ``instruction.md`` and ``environment/workspace`` (plus, for the sibling-leak
class, other tasks' ``environment/workspace`` of the same session).
"""
