"""pipeline/collector.py at exit: a process that ran a run freezes what exists before the
interpreter's final collections, and what it wrote still reaches its files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

# Run as a fresh interpreter: atexit handlers and finalization only happen when a process ends.
PROGRAM = textwrap.dedent("""
    import atexit, gc, json, logging, sys
    from pathlib import Path

    out = Path(sys.argv[1])
    # Registered before the collector's handler, so it runs after it (last registered, first run).
    atexit.register(lambda: (out / "at_exit.json").write_text(json.dumps({"frozen": gc.get_freeze_count()})))

    from eval_pipelines.pipeline.collector import collection_paused, freeze_at_exit
    with collection_paused():
        import eval_pipelines.pipeline.catalog  # noqa: F401 - what an import under the pause does
    gc.unfreeze()  # back to the collector, as run_stages does when a run ends
    if sys.argv[2] == "ran a run":
        freeze_at_exit()  # what run_stages does then
    assert gc.get_freeze_count() == 0

    # What a process leaves to its end: cycles of objects, a log file, a file flushed, standard output.
    class Node:
        def __init__(self): self.me = self
    keep = [Node() for _ in range(1000)]
    logging.getLogger("exit-test").addHandler(logging.FileHandler(out / "log.txt"))
    logging.getLogger("exit-test").warning("logged before exit")
    flushed = open(out / "flushed.txt", "w")
    flushed.write("written and flushed, never closed")
    flushed.flush()
    print("printed before exit", end="")
""")


def run(tmp_path: Path, what: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path), what], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "printed before exit"
    assert (tmp_path / "log.txt").read_text() == "logged before exit\n"
    assert (tmp_path / "flushed.txt").read_text() == "written and flushed, never closed"
    return json.loads((tmp_path / "at_exit.json").read_text())


def test_a_process_that_ran_a_run_freezes_everything_at_exit_and_its_output_is_complete(tmp_path: Path) -> None:
    at_exit = run(tmp_path, "ran a run")
    # The cycles above, the modules and their classes: out of the final collections' way.
    assert at_exit["frozen"] > 1000, at_exit


def test_a_process_that_only_imported_exits_as_python_does(tmp_path: Path) -> None:
    # The definitions loaded by the webserver, the daemon or a code server: no exit handler.
    assert run(tmp_path, "only imported")["frozen"] == 0


def test_the_exit_handler_is_registered_once_per_process() -> None:
    program = textwrap.dedent("""
        import atexit
        registered = []
        real = atexit.register
        atexit.register = lambda f, *a, **k: (registered.append(f), real(f, *a, **k))[1]
        from eval_pipelines.pipeline.collector import freeze_at_exit
        for _ in range(3):
            freeze_at_exit()
        print(len(registered))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
