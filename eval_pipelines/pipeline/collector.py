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

At exit the same holds for the whole process: the interpreter's finalization clears the modules
and runs full collections as it goes, ~0.4 s each over the ~460,000 objects a Dagster run's
process holds after a 1,000-case partition: 1.3-2.0 s between the run's last event and the end
of `dagster asset materialize` (0.09 s with everything frozen first). The memory goes back to the
operating system whatever the collector does, so a process that ran a run (the CLI, a Dagster
run's process) freezes what exists once its ``atexit`` handlers start (``freeze_at_exit``,
registered by ``run_stages``). Objects die by reference count as the modules are cleared, as
before; what the final collections alone would have reached (objects in reference cycles, such
as a module's globals once it defines a function) is no longer finalized, which Python never
promised (``object.__del__``; ``open()`` warns that a file written and never closed may not be
complete): the stores, the reports and logging close or flush their files themselves, and the
interpreter still flushes ``sys.stdout`` and ``sys.stderr``.
"""

from __future__ import annotations

import atexit
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


_freezes_at_exit = False


def freeze_at_exit() -> None:
    """Skip the interpreter's full collections at exit (see above); registered once a process.
    ``atexit`` runs handlers last-registered first, so handlers registered later (Dagster's,
    a test's) run before it, and those registered earlier (logging's flush) after it, as usual."""
    global _freezes_at_exit
    if not _freezes_at_exit:
        atexit.register(gc.freeze)
        _freezes_at_exit = True
