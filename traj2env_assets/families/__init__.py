"""Task families: each mines candidates from replay records and turns them into Harbor tasks."""
