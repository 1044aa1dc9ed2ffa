"""The README's API/version table is generated from schemas/; this keeps it current."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_api_table_matches_schemas():
    spec = importlib.util.spec_from_file_location("readme_api_table", ROOT / "tools" / "readme_api_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = (ROOT / "README.md").read_text()
    assert module.render(readme) == readme, "run: python tools/readme_api_table.py"
