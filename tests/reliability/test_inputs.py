"""Hostile skill packages, suites and datasets (issue #9, "bad input corpus").

Every case is built at test time in ``tmp_path`` (the 50 MB JSONL, the zip
bomb and the truncated zip are never committed) and goes through

* the CLI, in-process: ``validate`` and ``run`` both exit 2 with a
  ``file[:line]: field.path: message`` line naming the problem, no traceback;
* an audit hook that records every file opened and every socket used while
  the CLI runs: nothing outside the project (the package, its declared
  ``datasets/`` folder, the extraction folder) besides Python's own files is
  opened, the planted secret next to the project is never opened, and no
  socket is created, resolved or connected (a listener on the port of the
  remote ``$ref`` case also counts zero connections);
* a time bound (pytest-timeout): none hangs.

A representative subset (``DAGSTER_CASES``) also runs as a Dagster job: the run
fails at ``eval_suite`` with a message naming the file and the problem.
The spec-file corpus in ``tests/fixtures/invalid/`` (58 files,
``tests/formats/test_invalid_corpus.py``) is the spec issue's; the cases here are in
addition to it.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import stat
import sys
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from eval_pipelines.cli import main

PROJECT = Path(__file__).resolve().parents[2]
GOOD_SKILL_MD = "---\nname: bad\ndescription: A hostile package.\nversion: 1.0.0\n---\nAnswer briefly.\n"
GOOD_SUITE = "tests:\n  - id: a\n    input: hi\n    assert:\n      - type: contains\n        value: hi\n"
TARGETS = "targets:\n  - name: echo\n    type: command\n    command: [echo, hi]\n"
SECRET = "CANARY-outside-the-package-5f1c"


@dataclass
class Ctx:
    project: Path  # project root: skills/, datasets/
    outside: Path  # a folder next to the project holding a secret
    remote_port: int  # a listener that must never see a connection

    @property
    def skills(self) -> Path:
        return self.project / "skills"


def package(ctx: Ctx, name: str, *, skill_md: str | bytes | None = GOOD_SKILL_MD, suite: str | None = GOOD_SUITE,
            suite_name: str = "eval.yaml", files: dict[str, str | bytes] | None = None,
            targets: str | None = TARGETS) -> Path:
    root = ctx.skills / name
    root.mkdir(parents=True)
    contents: dict[str, str | bytes | None] = {"SKILL.md": skill_md, suite_name: suite, "targets.yaml": targets}
    contents.update(files or {})
    for rel, text in contents.items():
        if text is None:
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            (root / rel).write_bytes(text)
        else:
            (root / rel).write_text(text)
    return root


def zipped(ctx: Ctx, name: str, entries: list[tuple[str | zipfile.ZipInfo, bytes]],
           compression: int = zipfile.ZIP_DEFLATED) -> Path:
    path = ctx.skills / f"{name}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression) as zf:
        for entry, data in entries:
            zf.writestr(entry, data)
    return path


def good_zip_entries() -> list[tuple[str | zipfile.ZipInfo, bytes]]:
    return [("SKILL.md", GOOD_SKILL_MD.encode()), ("eval.yaml", GOOD_SUITE.encode()),
            ("targets.yaml", TARGETS.encode())]


def suite_with_dataset(ref: str) -> str:
    return f"tests: {ref}\n"


# ---- the cases: name -> (builder, text the error must contain) -----------------------


def _zip_truncated(ctx: Ctx) -> Path:
    path = zipped(ctx, "truncated", good_zip_entries())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _zip_symlink(ctx: Ctx) -> Path:
    info = zipfile.ZipInfo("eval.yaml")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return zipped(ctx, "symlink", [("SKILL.md", GOOD_SKILL_MD.encode()), (info, b"/etc/passwd")])


def _zip_bomb(ctx: Ctx) -> Path:
    # 60 MB of zeros deflate to about 60 KB: a ratio near 1000.
    return zipped(ctx, "bomb", [*good_zip_entries(), ("data/zeros.jsonl", bytes(60 * 1024 * 1024))])


def _zip_bad_crc(ctx: Ctx) -> Path:
    payload = b"tests:\n" + b"  - id: a\n    input: hi\n" * 50
    path = zipped(ctx, "badcrc", [("SKILL.md", GOOD_SKILL_MD.encode()), ("eval.yaml", payload)],
                  compression=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    spot = data.index(b"input: hi") + 7
    data[spot] = ord("X")  # stored bytes changed, CRC in the headers not
    path.write_bytes(bytes(data))
    return path


def _zip_many_entries(ctx: Ctx) -> Path:
    return zipped(ctx, "many", good_zip_entries() + [(f"f/{i}.txt", b"") for i in range(5001)],
                  compression=zipfile.ZIP_STORED)


def _random_bytes_zip(ctx: Ctx) -> Path:
    path = ctx.skills / "random.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(4096))
    return path


def _empty_zip_file(ctx: Ctx) -> Path:
    path = ctx.skills / "empty.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def _link_to_outside(ctx: Ctx, name: str, link: str, target: Path, **kw: Any) -> Path:
    root = package(ctx, name, **kw)
    (root / link).unlink(missing_ok=True)
    (root / link).symlink_to(target)
    return root


def _fifo_dataset(ctx: Ctx) -> Path:
    root = package(ctx, "fifo", suite=suite_with_dataset("file://data.jsonl"))
    os.mkfifo(root / "data.jsonl")
    return root


def _fifo_suite_file(ctx: Ctx) -> Path:
    path = ctx.project / "suite-fifo.yaml"
    os.mkfifo(path)
    return path


def _remote_ref_harness(ctx: Ctx) -> Path:
    suite = ("eval_suite:\n  name: s\n  evals:\n"
             f"    - $ref: http://127.0.0.1:{ctx.remote_port}/evals.yaml\n")
    return package(ctx, "remote-ref", suite=suite, suite_name="eval-suite.yaml")


def _remote_ref_schema(ctx: Ctx) -> Path:
    suite = (GOOD_SUITE.replace("contains", "json_schema").replace(
        "value: hi", f'value: {{"$ref": "http://127.0.0.1:{ctx.remote_port}/schema.json"}}'))
    return package(ctx, "remote-schema", suite=suite)


def _alias_bomb() -> str:
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\ntests: [*i]\n"  # 9**9 = 387 million strings if expanded


def _deep_json_line() -> str:
    return "[" * 100_000 + "]" * 100_000 + "\n"


def _tests_json(field: str, value: str) -> str:
    """A v2 tests.json with one bad timeout (issue 19): settings.defaultTimeout or evaluation.timeout."""
    settings = f'"settings": {{"defaultTimeout": {value}}}, ' if field == "default" else ""
    evaluation = f', "evaluation": {{"timeout": {value}}}' if field == "case" else ""
    return ('{"version": "2.0", "skill": "bad", ' + settings + '"testCases": [{"id": "a", "name": "a", '
            '"input": {"prompt": "hi"}, "expected": {"output": "hi"}' + evaluation + '}]}')


BAD_TIMEOUTS = {"string": ('"fast"', "invalid timeout 'fast'"), "negative": ("-5", "invalid timeout -5"),
                "list": ("[1]", "invalid timeout [1]"), "nan": ("NaN", "invalid timeout nan"),
                "infinity": ("Infinity", "invalid timeout inf"), "1e400": ("1e400", "invalid timeout inf")}


def _ids(*ids: str) -> str:
    return "tests:\n" + "".join(f"  - id: {i}\n    input: hi\n    assert:\n      - type: contains\n"
                                f"        value: hi\n" for i in ids)


def _alias_bytes_bomb() -> str:
    # 100 aliases of a 1 MB string: few nodes, but 100 MB once anything stores the values.
    return (GOOD_SUITE + "    metadata:\n      big: &big " + "x" * (1024 * 1024) + "\n      copies: ["
            + ", ".join(["*big"] * 100) + "]\n")


def _suite_link_loop(ctx: Ctx) -> Path:
    root = package(ctx, "loop", suite=None)
    (root / "eval.yaml").symlink_to(root / "eval.yaml")
    return root


ISSUE_19_CASES: dict[str, tuple[Callable[[Ctx], Path], str]] = {
    **{f"tests_json_default_timeout_{name}": (
        lambda c, v=value, n=name: package(c, f"dt{n}", suite=_tests_json("default", v), suite_name="tests.json"),
        message) for name, (value, message) in BAD_TIMEOUTS.items()},
    **{f"tests_json_case_timeout_{name}": (
        lambda c, v=value, n=name: package(c, f"ct{n}", suite=_tests_json("case", v), suite_name="tests.json"),
        message) for name, (value, message) in BAD_TIMEOUTS.items()},
    "threshold_nan": (lambda c: package(c, "thnan", suite="thresholds:\n  required_pass_rate: .nan\n"
                                        + GOOD_SUITE), "invalid threshold nan"),
    "threshold_inf": (lambda c: package(c, "thinf", suite="thresholds:\n  required_pass_rate: .inf\n"
                                        + GOOD_SUITE), "invalid threshold inf"),
    "threshold_negative": (lambda c: package(c, "thneg", suite="thresholds:\n  required_pass_rate: -0.5\n"
                                             + GOOD_SUITE), "invalid threshold -0.5"),
    "composite_weight_of_missing_child": (lambda c: package(c, "cweight", suite=GOOD_SUITE.replace(
        "      - type: contains\n        value: hi\n",
        "      - type: composite\n        aggregator:\n          type: weighted_average\n"
        "          weights: {ghost: 2}\n        assert:\n          - name: real\n            type: contains\n"
        "            value: hi\n")), "aggregator weights name ['ghost']"),
    "yaml_alias_bytes_bomb": (lambda c: package(c, "bytesbomb", suite=_alias_bytes_bomb()),
                              "bytes of text (YAML aliases?)"),
    "ids_equal_after_nfc": (lambda c: package(c, "nfc", suite=_ids("caf\u00e9", "cafe\u0301")),
                            "duplicate test id 'caf\u00e9'"),
    "id_with_newline": (lambda c: package(c, "idnl", suite=_ids('"a\\nb"')), "U+000A"),
    "id_with_bidi_override": (lambda c: package(c, "idbidi", suite=_ids("evil\u202etxt")),
                              "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    "suite_symlink_loop": (_suite_link_loop, "symbolic link loop"),
}


CASES: dict[str, tuple[Callable[[Ctx], Path], str]] = {
    # -- archives
    "zip_truncated": (_zip_truncated, "not a readable zip archive"),
    "zip_slip": (lambda c: zipped(c, "slip", good_zip_entries() + [("../../escaped.txt", b"x")]),
                 "unsafe path in archive: '../../escaped.txt'"),
    "zip_absolute_path": (lambda c: zipped(c, "abs", good_zip_entries() + [("/tmp/escaped.txt", b"x")]),
                          "unsafe path in archive"),
    "zip_backslash_path": (lambda c: zipped(c, "bslash", good_zip_entries() + [("..\\escaped.txt", b"x")]),
                           "unsafe path in archive"),
    "zip_symlink": (_zip_symlink, "symbolic link in archive"),
    "zip_bomb": (_zip_bomb, "zip bomb"),
    "zip_bad_crc": (_zip_bad_crc, "archive is damaged"),
    "zip_too_many_entries": (_zip_many_entries, "at most 5000"),
    "zip_random_bytes": (_random_bytes_zip, "not a readable zip archive"),
    "zip_empty_file": (_empty_zip_file, "not a readable zip archive"),
    "zip_without_skill_md": (lambda c: zipped(c, "nomd", [("eval.yaml", GOOD_SUITE.encode())]), "no SKILL.md"),
    "zip_two_top_folders": (lambda c: zipped(c, "two", [("a/SKILL.md", GOOD_SKILL_MD.encode()),
                                                        ("b/SKILL.md", GOOD_SKILL_MD.encode())]), "no SKILL.md"),
    # -- SKILL.md and the partition key
    "skill_md_missing": (lambda c: package(c, "nomd", skill_md=None), "SKILL.md not found"),
    "no_front_matter": (lambda c: package(c, "nofm", skill_md="# just a title\n"), "no front matter"),
    "front_matter_unclosed": (lambda c: package(c, "unclosed", skill_md="---\nname: bad\n"), "not closed"),
    "front_matter_list": (lambda c: package(c, "fmlist", skill_md="---\n- a\n- b\n---\n"), "not a mapping"),
    "front_matter_deep": (lambda c: package(c, "fmdeep", skill_md="---\nname: " + "[" * 20_000 + "\n---\n"),
                          "invalid front matter YAML"),
    "skill_md_not_utf8": (lambda c: package(c, "latin1", skill_md=GOOD_SKILL_MD.encode() + b"caf\xe9\n"),
                          "not valid UTF-8"),
    "name_with_pipe": (lambda c: package(c, "pipe", skill_md=GOOD_SKILL_MD.replace("name: bad", "name: 'a|b'")),
                       "invalid skill name 'a|b'"),
    "version_with_pipe": (lambda c: package(c, "vpipe", skill_md=GOOD_SKILL_MD.replace("1.0.0", "'1.0|x'")),
                          "invalid version '1.0|x'"),
    "version_with_newline": (lambda c: package(c, "vnl", skill_md=GOOD_SKILL_MD.replace("1.0.0", '"1.0\\nx"')),
                             "invalid version '1.0\\nx'"),
    "name_with_newline": (lambda c: package(c, "nnl", skill_md=GOOD_SKILL_MD.replace("name: bad",
                                                                                     'name: "bad\\nx"')),
                          "invalid skill name"),
    "version_read_as_float": (lambda c: package(c, "float", skill_md=GOOD_SKILL_MD.replace("1.0.0", "1.10")),
                              "read as a number"),
    "skill_md_links_outside": (lambda c: _link_to_outside(c, "mdlink", "SKILL.md", c.outside / "SKILL.md"),
                               "outside the skill package"),
    # -- the suite file
    "no_suite": (lambda c: package(c, "nosuite", suite=None), "no eval suite found"),
    "suite_links_outside": (lambda c: _link_to_outside(c, "suitelink", "eval.yaml", c.outside / "secret.yaml"),
                            "outside the skill package"),
    "targets_link_outside": (lambda c: _link_to_outside(c, "tlink", "targets.yaml", c.outside / "secret.yaml"),
                             "outside the skill package"),
    "yaml_nested_20k_deep": (lambda c: package(c, "deep", suite="tests: " + "[" * 20_000 + "]" * 20_000 + "\n"),
                              "nesting deeper than 64"),
    "yaml_anchors_expand_exponentially": (lambda c: package(c, "laughs", suite=_alias_bomb()),
                                          "expands to more than"),
    "yaml_python_tag": (lambda c: package(c, "pytag", suite="tests: !!python/object/apply:os.system "
                                                           "['touch /tmp/pwned-eval-pipelines']\n"),
                        "unsupported YAML tag"),
    "yaml_5000_digit_int": (lambda c: package(c, "bigint", suite=GOOD_SUITE + "    weight: 1" + "0" * 5000 + "\n"),
                            "invalid YAML value"),
    "yaml_duplicate_keys": (lambda c: package(c, "dup", suite="tests: []\ntests: []\n"), "duplicate key"),
    "suite_empty_file": (lambda c: package(c, "emptysuite", suite=""), "tests"),
    "harness_circular_ref": (lambda c: package(c, "refcycle", suite_name="eval-suite.yaml", suite=(
        "eval_suite:\n  name: s\n  evals:\n    - $ref: ./a.yaml\n"), files={"a.yaml": "- $ref: ./b.yaml\n",
                                                                         "b.yaml": "- $ref: ./a.yaml\n"}), "cycle"),
    "harness_remote_ref": (_remote_ref_harness, "remote $ref"),
    "schema_remote_ref": (_remote_ref_schema, "never fetched"),
    "schema_circular_ref": (lambda c: package(c, "schemacycle", suite=GOOD_SUITE.replace("contains", "json_schema")
                                              .replace("value: hi", 'value: {"$ref": "#/$defs/a", "$defs": '
                                                       '{"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}')),
                            "circular $ref"),
    "fifo_suite_file": (_fifo_suite_file, "not a regular file"),
    # -- datasets and file references
    "dataset_absolute_path": (lambda c: package(c, "etc", suite=suite_with_dataset("file:///etc/passwd")),
                              "outside the skill package"),
    "dataset_dotdot_path": (lambda c: package(c, "dotdot", suite=suite_with_dataset(
        "file://../../../outside/secret.jsonl")), "outside the skill package"),
    "dataset_links_outside": (lambda c: _link_to_outside(c, "dlink", "data.jsonl", c.outside / "secret.jsonl",
                                                         suite=suite_with_dataset("file://data.jsonl")),
                              "outside the skill package"),
    "dataset_is_a_fifo": (_fifo_dataset, "not a regular file: file://data.jsonl"),
    "dataset_dev_zero": (lambda c: package(c, "devzero", suite=suite_with_dataset("file:///dev/zero")),
                         "outside the skill package"),
    "jsonl_50mb_single_line": (lambda c: package(c, "huge", suite=suite_with_dataset("file://data.jsonl"), files={
        "data.jsonl": '{"input": "' + "x" * (50 * 1024 * 1024) + '"}\n'}), "at most 20971520 bytes"),
    "jsonl_nested_100k_deep": (lambda c: package(c, "jdeep", suite=suite_with_dataset("file://data.jsonl"),
                                                 files={"data.jsonl": _deep_json_line()}), "nesting too deep"),
    "jsonl_not_utf8": (lambda c: package(c, "jlatin", suite=suite_with_dataset("file://data.jsonl"),
                                         files={"data.jsonl": b'{"input": "caf\xe9"}\n'}), "not valid UTF-8"),
    "jsonl_not_objects": (lambda c: package(c, "jlist", suite=suite_with_dataset("file://data.jsonl"),
                                            files={"data.jsonl": "1\n[2]\n"}), "data.jsonl:1"),
    "csv_nul_byte": (lambda c: package(c, "nul", suite=suite_with_dataset("file://data.csv"),
                                       files={"data.csv": "input\nhello\x00world\n"}), "NUL byte"),
    "csv_field_over_limit": (lambda c: package(c, "bigfield", suite=suite_with_dataset("file://data.csv"),
                                               files={"data.csv": "input\n" + "x" * 200_000 + "\n"}),
                             "field larger than field limit"),
    "csv_without_input_column": (lambda c: package(c, "noinput", suite=suite_with_dataset("file://data.csv"),
                                                   files={"data.csv": "question\nhi\n"}), "no `input` column"),
    # -- targets
    "targets_yaml_invalid": (lambda c: package(c, "tbad", targets="targets: [\n"), "invalid YAML"),
    "targets_unknown_type": (lambda c: package(c, "ttype", targets="targets:\n  - name: x\n    type: telnet\n"),
                             "targets.yaml"),
    "suite_names_unknown_target": (lambda c: package(c, "tunknown", suite="execution:\n  targets: [nope]\n"
                                                     + GOOD_SUITE), "unknown target(s) ['nope']"),
    **ISSUE_19_CASES,
}

# Cases whose package opens as bad@1.0.0 (or fails to open at all) and is found in skills/:
# the Dagster subset, one per family of problem.
DAGSTER_CASES = ["zip_slip", "zip_bomb", "zip_truncated", "version_with_pipe", "skill_md_links_outside",
                 "yaml_anchors_expand_exponentially", "yaml_nested_20k_deep", "harness_remote_ref",
                 "schema_circular_ref", "dataset_dotdot_path", "jsonl_50mb_single_line", "csv_nul_byte"]


# ---- guards: files opened, sockets used ---------------------------------------------


@dataclass
class Watch:
    active: bool = False
    opened: list[str] = field(default_factory=list)
    network: list[tuple[str, Any]] = field(default_factory=list)


WATCH = Watch()
_NETWORK_EVENTS = ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.bind",
                   "urllib.Request", "http.client.connect")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not WATCH.active:
        return
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        WATCH.opened.append(os.fsdecode(args[0]))
    elif event.startswith(_NETWORK_EVENTS):
        WATCH.network.append((event, args[:2]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it does nothing unless WATCH.active


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[Any]]]:
    """A TCP listener standing in for a remote host: it must see no connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[Any] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            seen.append(addr)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join(2)
    server.close()


@pytest.fixture
def ctx(tmp_path: Path, listener: tuple[int, list[Any]]) -> Ctx:
    project = tmp_path / "project"
    (project / "skills").mkdir(parents=True)
    (project / "datasets").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(f"tests:\n  - id: s\n    input: {SECRET}\n")
    (outside / "secret.jsonl").write_text(f'{{"input": "{SECRET}"}}\n')
    (outside / "SKILL.md").write_text(f"---\nname: bad\ndescription: {SECRET}\nversion: 1.0.0\n---\n")
    return Ctx(project, outside, listener[0])


def _allowed_prefixes(ctx: Ctx) -> tuple[str, ...]:
    python = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return (str(ctx.project), str(ctx.project.resolve()), str(PROJECT / "eval_pipelines"), *python,
            "/dev/null", "/usr/lib/python3", "/usr/share/zoneinfo", "/etc/localtime")


def run_cli(ctx: Ctx, argv: list[str]) -> tuple[int, str, float]:
    """The CLI in-process, watched; (exit code, everything printed, seconds)."""
    out, err = io.StringIO(), io.StringIO()
    WATCH.opened.clear()
    WATCH.network.clear()
    started = time.perf_counter()
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    WATCH.active = True
    try:
        code = main(["--root", str(ctx.project), *argv])
    finally:
        WATCH.active = False
        sys.stdout, sys.stderr = real_out, real_err
    return code, out.getvalue() + err.getvalue(), time.perf_counter() - started


def check_guards(ctx: Ctx, listener_seen: list[Any]) -> None:
    assert WATCH.network == [], f"network used: {WATCH.network}"
    assert listener_seen == [], "the remote $ref host was contacted"
    outside = [p for p in WATCH.opened if os.path.realpath(p).startswith(str(ctx.outside.resolve()))]
    assert outside == [], f"read outside the package: {outside}"
    allowed = _allowed_prefixes(ctx)
    stray = [p for p in WATCH.opened
             if not os.path.realpath(p).startswith(allowed) and not p.startswith(allowed)]
    assert stray == [], f"opened files outside the project and Python: {stray}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_is_refused_by_the_cli(name: str, ctx: Ctx, listener: tuple[int, list[Any]]) -> None:
    build, expected = CASES[name]
    target = build(ctx)
    for command in (["validate"], ["run", "--db", str(ctx.project / "r.duckdb")]):
        code, text, seconds = run_cli(ctx, [*command, str(target)])
        assert code == 2, f"{command[0]}: exit {code}\n{text}"
        assert "Traceback" not in text
        # `run` takes bare suite files too: the same refusal as `validate`.
        assert expected in text, f"{command[0]}: {expected!r} not in\n{text}"
        problem_lines = [line for line in text.splitlines() if expected in line]
        # `file[:line]: field.path: message`, the file being the input or a file inside it.
        assert any(line.startswith(str(ctx.project)) for line in problem_lines), text
        assert seconds < 60, seconds
        check_guards(ctx, listener[1])
    assert not (ctx.project / "r.duckdb").exists()  # nothing was evaluated or stored
    assert not Path("/tmp/pwned-eval-pipelines").exists()
    leftovers = list((ctx.project / ".data" / "packages").glob("*.partial")) if (
        ctx.project / ".data" / "packages").exists() else []
    assert leftovers == []  # a refused archive leaves no half-extracted folder


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert set(DAGSTER_CASES) <= set(CASES)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hostile_packages_fail_dagster_runs_readably(tmp_path: Path, listener: tuple[int, list[Any]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each package of the subset, alone in a project, as a run of the job for `bad@1.0.0`."""
    import dagster as dg

    from eval_pipelines.definitions import build_definitions
    from eval_pipelines.defs.partitions import skill_versions

    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
        monkeypatch.delenv(name, raising=False)
    quiet = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(skill_versions.name, ["bad@1.0.0"])
        for name in DAGSTER_CASES:
            ctx = Ctx(tmp_path / name / "project", tmp_path / name / "outside", listener[0])
            (ctx.project / "skills").mkdir(parents=True)
            ctx.outside.mkdir()
            (ctx.outside / "secret.jsonl").write_text(f'{{"input": "{SECRET}"}}\n')
            (ctx.outside / "SKILL.md").write_text(f"---\nname: bad\ndescription: {SECRET}\nversion: 1.0.0\n---\n")
            build, expected = CASES[name]
            build(ctx)
            db = ctx.project / "results.duckdb"
            job = build_definitions(str(ctx.project), str(db)).resolve_job_def("evaluate_skill_version")
            WATCH.opened.clear()
            WATCH.network.clear()
            WATCH.active = True
            try:
                result = job.execute_in_process(
                    partition_key=dg.MultiPartitionKey({"date": "2026-11-20", "skill_version": "bad@1.0.0"}),
                    instance=instance, raise_on_error=False, run_config=quiet)
            finally:
                WATCH.active = False
            assert not result.success, name
            assert result.get_failed_step_keys() == {"evaluate_partition"}, name
            (event,) = result.get_step_failure_events()
            message = event.step_failure_data.error.message
            assert expected in message, f"{name}: {message}"
            assert str(ctx.project) in message, f"{name}: {message}"  # names the file
            assert "Traceback" not in message and event.step_failure_data.error.cause is None, name
            assert event.step_failure_data.user_failure_data is not None, name  # a dagster.Failure
            assert not result.get_asset_materialization_events(), name
            assert WATCH.network == [] and listener[1] == [], name
            assert not [p for p in WATCH.opened if str(ctx.outside) in os.path.realpath(p)], name
            shutil.rmtree(tmp_path / name)  # the 60 MB zip and 50 MB JSONL go at once


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_partition_keys_with_a_newline_or_pipe_registered_by_hand(tmp_path: Path) -> None:
    """The sensor and the demo never register such keys; Dagster itself accepts them from the UI/API."""
    import dagster as dg

    from eval_pipelines.definitions import build_definitions
    from eval_pipelines.defs.partitions import skill_versions
    from eval_pipelines.suite.package import partition_key_problem

    (tmp_path / "skills").mkdir()
    quiet = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    job = build_definitions(str(tmp_path), str(tmp_path / "r.duckdb")).resolve_job_def("evaluate_skill_version")
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(skill_versions.name, ["bad@1.0\nx", "bad|x@1.0.0"])
        result = job.execute_in_process(
            partition_key=dg.MultiPartitionKey({"date": "2026-11-20", "skill_version": "bad@1.0\nx"}),
            instance=instance, raise_on_error=False, run_config=quiet)
        assert not result.success
        (event,) = result.get_step_failure_events()
        assert "is not a skill version: version '1.0\\nx' must be" in event.step_failure_data.error.message
        # `|` is Dagster's multi-partition delimiter: Dagster refuses to launch, naming the key.
        with pytest.raises(dg.DagsterUnknownPartitionError, match=r"2026-11-20\|bad\|x@1.0.0"):
            job.execute_in_process(
                partition_key=dg.MultiPartitionKey({"date": "2026-11-20", "skill_version": "bad|x@1.0.0"}),
                instance=instance, raise_on_error=False, run_config=quiet)
    assert partition_key_problem("bad|x@1.0.0") and partition_key_problem("bad@1.0\nx")
