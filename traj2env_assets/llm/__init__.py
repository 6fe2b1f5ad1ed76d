"""The shared LLM layer of the build, extend and qa families.

``client`` (``LlmClient.propose``: cached, budgeted, schema-strict), ``settings`` (how
calls are made, from ``PipelineOptions``), ``prompts`` (versioned prompt files next to
each family), ``outcome`` (what a call gives a family, and the skip reasons), ``ledger``
(the run's file-locked spend ledger and ``read_llm_usage``), ``usage`` (the figures for
report.json), ``cache`` (the reply cache), ``provider`` (the only LiteLLM import).
Nothing is re-exported here: importing LiteLLM takes seconds, and only ``client`` and
``provider`` do.
"""
