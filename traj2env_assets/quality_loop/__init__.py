"""The quality loop over a published dataset: ``traj2env review`` (people's verdicts on
tasks) and ``traj2env rollout`` (agents' rollouts per task); both rewrite the tasks' cards
and the dataset manifest. Above the stages: they read the run's funnel."""
