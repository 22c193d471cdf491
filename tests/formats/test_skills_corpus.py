"""How many real Agent Skills packages with `evals/evals.json` we load (issues 31 and 32).

`tests/data/skills_corpus/` holds byte-for-byte copies of 64 packages from 64 public repositories
(SKILL.md, the evals file, the input files the evals name when the stored index holds them as text;
see its README and MANIFEST.tsv for how they were sampled). Each package is loaded like
`eval-pipelines validate <folder>` does, the folder being the one that holds `evals/` (or
`evals.json` itself when a package keeps it at its root). A package either loads or is refused with
one-line errors naming a file of the package.

Measured: 58 of 64 load (91%; issue 31 asks for 90%). An eval whose input file is missing or whose
task is absent breaks that eval only: it is kept as an error row, with a one-line warning, and the
package's other evals run; a package where no eval can run is refused. Each of the 6 refusals is
listed in REFUSED with the real problem every one of its errors names. A change that makes another
package fail, or lets one of these load, fails this test until REFUSED and the figures in the
corpus README and docs/skill-creator.md are updated.
"""

from __future__ import annotations

import functools
from pathlib import Path

from eval_pipelines.run.targets.config import AgentTargetConfig
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_skill

CORPUS = Path(__file__).resolve().parents[1] / "data" / "skills_corpus"
FLOOR = 58 / 64  # issue 31's bar is 90%: asserted below too
# Each refused package: its class, and the words every one of its errors says (one line each).
NOT_HELD = "the package does not hold it"
REFUSED = {
    "Abo-Fat__paperReading": ("input files never committed (./papers/*.pdf)", NOT_HELD),
    "dharmsen__readable/skill": ("input files never committed (plans, a range of images)", NOT_HELD),
    "54cwh__latex2word": ("absolute input path on the author's machine", "absolute path outside the package"),
    "182311729zhouyicheng__paper-style-deconstruct": ("evals with no task (papers to download)", "prompt: required field"),
    "1997nanana__nana-prd-writing": ("an empty list of evals", "no evals"),
    "2023winner__test-trea-upload": ("inputs that are code, never copied", NOT_HELD),
}
MISSING = ("the package does not hold it", "absolute path outside the package")
# The corpus suites name no target of their own: the project's `default` one, as `validate` in a
# project with a targets.yaml would give them; an agent target, as skills are run (issue 31: a chat
# target cannot be given a binary or directory input, and refuses such a package by the target's type).
TARGETS = {"default": AgentTargetConfig(name="default", model="m")}


def package_folders() -> list[Path]:
    """The folder to validate for each package: the one holding `evals/evals.json`, else the one
    holding a root `evals.json` (the shallowest such file of each package)."""
    folders = []
    for package in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        evals = min(package.rglob("evals.json"), key=lambda p: (len(p.parts), str(p)))
        folders.append(evals.parent.parent if evals.parent.name == "evals" else evals.parent)
    return folders


@functools.cache
def _load_all(tmp: Path) -> tuple[dict[Path, int], dict[Path, list[str]]]:
    loaded, failed = {}, {}
    for i, folder in enumerate(package_folders()):
        try:
            skill = load_skill(folder, datasets_dir=None, extract_dir=tmp / str(i), project_targets=TARGETS)
        except SpecErrors as exc:
            failed[folder] = [str(e) for e in exc.errors]
            continue
        loaded[folder] = len(skill.suite.tests)
    return loaded, failed


def test_the_corpus_holds_64_packages_from_as_many_repositories() -> None:
    folders = package_folders()
    assert len(folders) >= 64
    assert len({f.relative_to(CORPUS).parts[0] for f in folders}) == len(folders)
    manifest = (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    listed = {line.split("\t")[0] for line in manifest[1:]}
    assert {f.relative_to(CORPUS).parts[0].replace("__", "/", 1) for f in folders} <= listed
    # no third-party code in the copy: scripts are listed in the manifest, not copied
    code = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".ps1")
    assert not [p for p in CORPUS.rglob("*") if p.suffix.lower() in code]


def test_the_real_packages_load_or_fail_in_one_line(tmp_path_factory) -> None:
    loaded, failed = _load_all(tmp_path_factory.mktemp("skills_corpus"))
    total = len(loaded) + len(failed)
    for folder, tests in loaded.items():
        assert tests > 0, folder
    for folder, errors in failed.items():
        assert errors, folder
        for error in errors:  # one line each, naming the package's folder or one of its files
            assert "\n" not in error and "Traceback" not in error, error
            assert str(folder) in error, error
    absent = [f for f, errors in failed.items() if all(any(m in e for m in MISSING) for e in errors)]
    print(f"\n{len(loaded)}/{total} skill packages load ({len(loaded) / total:.0%}), "
          f"{sum(loaded.values())} tests; {len(absent)} refused only for input files the copy lacks")
    for folder, errors in failed.items():
        print(f"  {folder.relative_to(CORPUS)}: {len(errors)} errors, first: "
              f"{errors[0].split(str(folder), 1)[-1].lstrip('/: ')}")
    assert len(loaded) / total >= FLOOR
    assert len(loaded) / total >= 0.9
    # every refusal is the known one, for its real problem (named by every one of its errors)
    refused = {f.relative_to(CORPUS).as_posix(): errors for f, errors in failed.items()}
    assert set(refused) == set(REFUSED), sorted(set(refused) ^ set(REFUSED))
    for name, errors in refused.items():
        assert all(REFUSED[name][1] in e for e in errors), (name, errors)
