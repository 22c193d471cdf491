"""promptfoo ``assert`` items (``items``) and its assertion vocabulary (``vocabulary`` and one
module per family: text, response, trace, red-team, RAG, conversation, function calls), mapped
onto our graders (``eval_pipelines.grading``)."""
