"""The garbage collector around a run: long-lived objects kept out of its full collections.

A full (generation 2) collection walks every container object of the process. In a run most of
them live as long as the process (modules, classes, pydantic schemas, Dagster's definitions,
the loaded suite), so such a collection frees next to nothing: py-spy and ``gc.callbacks`` put
them at ~0.3 s of a 1,000-case ``eval-pipelines run`` (two during the imports, one stalling the
event loop as the model phase began, one as the process ended) and at 0.4-0.7 s each in a
Dagster step (two while a run worker imports the evaluation core, then one every few
partitions in a warm process). ``gc.freeze`` moves what exists into a generation no collection
walks; frozen objects still die by reference count. ``run_stages`` freezes what exists when a
run starts and hands it all back when the run ends (``gc.unfreeze``), so a process that goes on
(a Dagster worker evaluating partition after partition, tests) never keeps garbage that happened
to be pending at a freeze.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collection_paused() -> Iterator[None]:
    """Import modules without cyclic garbage collection, then freeze what they made (re-enabling
    alone would only postpone the walk to the next young collections)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()

