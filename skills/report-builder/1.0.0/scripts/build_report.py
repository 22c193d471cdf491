"""Build out/report.json from sales CSV data: files, gzipped files, or folders of them.

Each CSV has the columns region,amount. Standard library only.
"""

import argparse
import csv
import gzip
import hashlib
import io
import json
import sys
from pathlib import Path


def _inputs(paths):
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        else:
            yield path


def _rows(path):
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out", default="out/report.json")
    args = parser.parse_args(argv)
    totals, rows, read = {}, 0, {}
    for path in _inputs(args.inputs):
        read[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        for row in _rows(path):
            totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
            rows += 1
    if not rows:
        print("no rows found", file=sys.stderr)
        return 1
    report = {"rows": rows, "total": sum(totals.values()), "regions": dict(sorted(totals.items())),
              "largest_region": max(sorted(totals), key=totals.get), "inputs": read}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}: {rows} rows, total {report['total']}, largest region {report['largest_region']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
