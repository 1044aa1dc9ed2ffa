"""Copy the differential suite's last figure into docs/compatibility.md.

The suite (tests/differential) writes its figure to ``.cache/differential.json`` at the end of a run that collected
it; after a whole run (``make test``, or ``.venv/bin/python -m pytest tests/differential``):

    .venv/bin/python tools/docs_differential_figure.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "compatibility.md"
REPORT = ROOT / ".cache" / "differential.json"
BEGIN = "<!-- differential-figure:begin -->"
END = "<!-- differential-figure:end -->"


def main() -> int:
    if not REPORT.exists():
        print(f"{REPORT} is missing: run the differential suite first")
        return 1
    report = json.loads(REPORT.read_text())
    if report["failed"]:
        print(f"the last run had unlisted differences in {len(report['failed'])} scenarios; not copying it")
        return 1
    text = PAGE.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    block = f"\n```text\n{report['line']}\n```\n"
    PAGE.write_text(text[:start] + block + text[end:])
    print(report["line"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
