# The solution folders hold project files (their own tests/ among them) meant for a task's
# /workspace, not tests of this repository: keep pytest from collecting them.
collect_ignore_glob = ["*/*"]
