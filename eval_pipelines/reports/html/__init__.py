"""The self-contained HTML report: ``page`` assembles it from its sections (``summary``,
``results``, ``changes``, ``charts``), ``format`` and ``assets`` hold the shared markup helpers."""
