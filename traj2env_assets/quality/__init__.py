"""Dataset quality beyond pass/fail: how hard the session found each fix (``effort``)."""
