"""One folder per stage of the design card, named as ``traj2env_assets.stage_names.STAGES``
lists them: the stage's domain code beside its Dagster asset (``asset.py``)."""
