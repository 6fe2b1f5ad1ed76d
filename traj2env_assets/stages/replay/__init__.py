"""Stage 3, replay: the session's files rebuilt before every command (``replay/<key>/``).

The replay engine itself is ``traj2env_assets.replay``; this stage runs it per partition."""
