"""The client examples of docs/clients.md are the files in examples/: each runs against its own broker and checks what it
shows (no record processed twice, a renewed record kept from the other consumer, one committed total after a
KIP-360 recovery), and docs/clients.md quotes each file as it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "kip983_worker.py": "worker B",
    "share_renew.py": "never a record the slow one held",
    "transactions_kip360.py": "totals: [b'60']",
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_example_runs(name):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert EXAMPLES[name] in done.stdout, done.stdout


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_readme_quotes_the_example(name):
    source = (ROOT / "examples" / name).read_text()
    body = source.split('"""', 2)[2].lstrip("\n")       # the code after the module docstring
    assert body in (ROOT / "docs" / "clients.md").read_text(), f"docs/clients.md must quote examples/{name} (after its docstring)"
