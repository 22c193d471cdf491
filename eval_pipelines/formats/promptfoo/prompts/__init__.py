"""promptfoo ``prompts``: templates and their Nunjucks rendering, prompt files (text, JSON/YAML
chat, functions), ``exec:`` prompts, images/audio/PDF variables, the ``_conversation`` history."""
