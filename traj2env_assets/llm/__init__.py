"""The shared LLM layer of the build, extend and qa families.

``client`` (the cached, budgeted, schema-strict LiteLLM client), ``prompts`` (versioned
prompt files), ``ledger`` (the run's file-locked spend ledger), ``usage`` (the figures
for report.json). Nothing is re-exported here: importing LiteLLM takes seconds, and only
``client`` and ``provider`` do.
"""
