"""Agent log formats: detection and conversion of Claude Code, Codex and pi logs to ATIF-v1.7."""
