"""Run requests over several skill versions: one run per batch of neighbouring versions.

Dagster runs a partitioned job over one partition or over a *range* of partitions, and
a range of the dynamic ``skill_version`` dimension is every key between its two ends in
the order the keys were added. A night's versions (the latest of each skill) are not all
neighbours in that order, so they are grouped into batches of consecutive keys, each a
run over a range holding exactly the batch, at most ``EVAL_PIPELINES_VERSIONS_PER_RUN``
(default 25) long so that a batch's run stays short, its memory bounded and the queued
run coordinator still runs batches side by side. ``1`` gives one run per version.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Iterable, Mapping

import dagster as dg
from dagster._core.storage.tags import (ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG,
                                       MAX_RUNTIME_SECONDS_TAG)

from eval_pipelines.defs.partitions import partition_key_for

VERSIONS_PER_RUN_VARIABLE = "EVAL_PIPELINES_VERSIONS_PER_RUN"
DEFAULT_VERSIONS_PER_RUN = 25


def versions_per_run(environ: Mapping[str, str] | None = None) -> int:
    """``EVAL_PIPELINES_VERSIONS_PER_RUN`` as a whole number of at least 1 (else the default)."""
    value = (os.environ if environ is None else environ).get(VERSIONS_PER_RUN_VARIABLE, "").strip()
    return max(1, int(value)) if value.isdigit() else DEFAULT_VERSIONS_PER_RUN


def neighbour_batches(ordered_keys: Iterable[str], chosen: set[str], limit: int) -> list[list[str]]:
    """``chosen`` in runs of keys that are consecutive in ``ordered_keys`` (Dagster's order of
    the dynamic partitions), each at most ``limit`` long: a range over a batch holds no other key."""
    batches: list[list[str]] = []
    current: list[str] = []
    for key in ordered_keys:
        if key in chosen and len(current) < limit:
            current.append(key)
            continue
        if current:
            batches.append(current)
        current = [key] if key in chosen else []
    if current:
        batches.append(current)
    return batches


def batch_run_request(batch: list[str], on: date, run_key_prefix: str, tags: Mapping[str, str],
                      max_runtime_s: int = 0) -> dg.RunRequest:
    """One version: a run of its partition, as before. Several: a run over their range, tagged
    with its ends and size (``eval/skill_version`` names the one version of a one-version run).

    ``max_runtime_s``: run monitoring's limit for a run (dagster.yaml); a batch of n versions gets
    n times it, so each version has the time it had in a run of its own."""
    if len(batch) == 1:
        return dg.RunRequest(run_key=f"{run_key_prefix}:{batch[0]}", partition_key=partition_key_for(batch[0], on),
                             tags={**tags, "eval/skill_version": batch[0]})
    first, last = str(partition_key_for(batch[0], on)), str(partition_key_for(batch[-1], on))
    return dg.RunRequest(run_key=f"{run_key_prefix}:{batch[0]}..{batch[-1]}", tags={
        **tags, ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last,
        "eval/skill_versions": f"{batch[0]} .. {batch[-1]} ({len(batch)} versions)",
        **({MAX_RUNTIME_SECONDS_TAG: str(max_runtime_s * len(batch))} if max_runtime_s > 0 else {})})
