"""AgentV suites (EntityProcess/agentv): v2-era files (``code_judge``, ``evaluators``) and HEAD's
``tests[].input`` shape through ``head`` (read by the eval_yaml family with AgentV's names), v5's
promptfoo-like ``prompts`` + ``tests[].vars`` through ``v5``. Rules from AgentV's own schema
and source (its zod schemas, ``yaml-parser.ts``); a third-party format
(:mod:`~eval_pipelines.formats.compat`).
"""
