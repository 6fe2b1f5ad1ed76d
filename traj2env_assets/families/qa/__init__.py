"""The qa family: a fact computed from Hugging Face dataset files → a grounded question with a
typed exact grader. ``family.QaFamily`` is what the registry lists; see its docstring."""
