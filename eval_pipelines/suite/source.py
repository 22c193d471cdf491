"""Read YAML/JSON documents and remember the line of every field.

Pydantic reports a failing field by path; :class:`Document.line_of` turns that
path into the line of the source file so errors can say ``eval.yaml:12``.
Hostile inputs are bounded here: file size, nesting depth and the number of
nodes an alias-heavy YAML may expand to.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from eval_pipelines.suite.errors import SpecErrors

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000
# Text the document expands to: aliases repeat a scalar without repeating its
# bytes in the file, and whatever stores the value later (JSON, DuckDB) pays for
# every copy -- 100 aliases of a 1 MB string must not become 100 MB.
MAX_EXPANDED_BYTES = 2 * MAX_FILE_BYTES

PathKey = tuple[Any, ...]
_STANDARD_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:omap"}


@dataclass
class Document:
    file: Path
    data: Any
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: PathKey) -> int | None:
        """Line of the deepest known prefix of ``path`` (1-based), if known."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


def read_text(file: Path) -> str:
    """File contents as text, with a clear error for size and encoding problems."""
    try:
        info = file.stat()
    except OSError as exc:
        raise SpecErrors.single(file, f"cannot read file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        # A FIFO would block the read forever, /dev/zero would never end.
        raise SpecErrors.single(file, "not a regular file", expected="a plain file (not a pipe, device or folder)")
    size = info.st_size
    if size > MAX_FILE_BYTES:
        raise SpecErrors.single(
            file, f"file is {size} bytes", expected=f"at most {MAX_FILE_BYTES} bytes"
        )
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise SpecErrors.single(file, f"cannot read file: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecErrors.single(
            file, f"byte {exc.start} is not valid UTF-8", line=line, expected="UTF-8 text"
        ) from None


class _Walker:
    """Turns a composed YAML node tree into Python values plus a line map."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.lines: dict[PathKey, int] = {}
        self.nodes = 0
        self.expanded = 0  # characters of scalar text, counting every alias again
        self.constructor = yaml.constructor.SafeConstructor()

    def build(self, node: yaml.Node, path: PathKey, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise SpecErrors.single(
                self.file,
                f"document expands to more than {MAX_NODES} nodes (YAML aliases?)",
                path=path,
                line=node.start_mark.line + 1,
            )
        if depth > MAX_DEPTH:
            raise SpecErrors.single(
                self.file,
                f"nesting deeper than {MAX_DEPTH} levels",
                path=path,
                line=node.start_mark.line + 1,
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if not isinstance(node, yaml.ScalarNode) and node.tag not in _STANDARD_TAGS:
            # Safe loading never runs code, but a silently ignored `!!python/...`
            # tag would hide what the author meant: refuse it.
            raise SpecErrors.single(
                self.file,
                f"unsupported YAML tag {node.tag!r}",
                path=path,
                line=node.start_mark.line + 1,
                expected="plain YAML mappings, lists and scalars",
            )
        if isinstance(node, yaml.MappingNode):
            own = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
            self.constructor.flatten_mapping(node)  # resolves `<<` merge keys: merged pairs come first
            merged_count = len(node.value) - own
            out: dict[Any, Any] = {}
            from_merge: set[str] = set()  # keys whose value came from a `<<` merge, not written here
            for position, (key_node, value_node) in enumerate(node.value):
                key = self.constructor.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    raise SpecErrors.single(
                        self.file,
                        "mapping keys must be plain scalars",
                        path=path,
                        line=key_node.start_mark.line + 1,
                    )
                key = str(key) if not isinstance(key, str) else key
                if position < merged_count:
                    # PyYAML lists the merged mappings last-listed first, so a later pair
                    # overriding an earlier one gives YAML 1.1's "first listed wins".
                    out.pop(key, None)
                    from_merge.add(key)
                elif key in from_merge:
                    # A key written next to `<<` overrides the merged value (YAML 1.1 merge semantics).
                    from_merge.discard(key)
                    del out[key]
                elif key in out:
                    raise SpecErrors.single(
                        self.file,
                        f"duplicate key {key!r}",
                        path=path + (key,),
                        line=key_node.start_mark.line + 1,
                    )
                out[key] = self.build(value_node, path + (key,), depth + 1)
                self.lines[path + (key,)] = key_node.start_mark.line + 1
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        self.expanded += len(node.value) if isinstance(node.value, str) else 0
        if self.expanded > MAX_EXPANDED_BYTES:
            raise SpecErrors.single(
                self.file,
                f"document expands to more than {MAX_EXPANDED_BYTES} bytes of text (YAML aliases?)",
                path=path,
                line=node.start_mark.line + 1,
                expected="aliases that do not repeat large values",
            )
        return self.constructor.construct_object(node, deep=True)


def parse_yaml(text: str, file: Path) -> Document:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise SpecErrors.single(
            file, f"invalid YAML: {exc.problem or exc.context}", line=line
        ) from None
    except yaml.YAMLError as exc:
        raise SpecErrors.single(file, f"invalid YAML: {exc}") from None
    except RecursionError:  # the composer recurses per level: `[[[[...` thousands deep
        raise SpecErrors.single(file, f"nesting deeper than {MAX_DEPTH} levels") from None
    if node is None:
        return Document(file, None)
    walker = _Walker(file)
    try:
        data = walker.build(node, (), 0)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise SpecErrors.single(
            file, f"invalid YAML value: {exc.problem}", line=mark.line + 1 if mark else None
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise SpecErrors.single(file, f"invalid YAML value: {exc}") from None
    return Document(file, data, walker.lines)


def parse_json(text: str, file: Path) -> Document:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecErrors.single(file, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise SpecErrors.single(file, f"nesting deeper than {MAX_DEPTH} levels") from None
    # JSON is (almost always) YAML: reuse the YAML composer for line numbers only.
    try:
        lines = parse_yaml(text, file).lines
    except SpecErrors:
        lines = {}
    _check_depth(data, file)
    return Document(file, data, lines)


def _check_depth(value: Any, file: Path, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise SpecErrors.single(file, f"nesting deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for item in value.values():
            _check_depth(item, file, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_depth(item, file, depth + 1)


def load_document(file: Path) -> Document:
    """Parse a ``.yaml``/``.yml``/``.json`` file into a :class:`Document`."""
    text = read_text(file)
    if file.suffix.lower() == ".json":
        return parse_json(text, file)
    return parse_yaml(text, file)
