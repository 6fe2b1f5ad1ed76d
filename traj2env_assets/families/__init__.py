"""Task families: each mines candidates from replay records and turns them into Harbor tasks.

``contract`` is what a family implements, ``registry`` lists the families; one folder
per family (``repair/``) holds its code and its prompts. The lifecycle every candidate
goes through is ``traj2env_assets.lifecycle``.
"""
