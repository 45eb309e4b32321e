"""requirements.lock (what `make` installs) agrees with requirements.txt (the readable list), and pins everything."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s#;]+)", re.M)


def pins(path: Path) -> dict[str, str]:
    """Package name (normalised as pip does) -> pinned version, for every `name==version` line of ``path``."""
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in PIN.findall(path.read_text())}


def test_every_pin_of_requirements_txt_is_in_the_lock():
    readable, lock = pins(ROOT / "requirements.txt"), pins(ROOT / "requirements.lock")
    assert readable, "requirements.txt pins nothing"
    differ = {name: (v, lock.get(name)) for name, v in readable.items() if lock.get(name) != v}
    assert not differ, f"requirements.lock disagrees with requirements.txt (run `make lock`): {differ}"


def test_the_lock_pins_every_line_and_names_no_machine():
    text = (ROOT / "requirements.lock").read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert lines and all(PIN.match(line) for line in lines), [line for line in lines if not PIN.match(line)]
    assert "file://" not in text and "/opt/" not in text, "the lock names a folder of this machine (make lock leaves them out)"
    assert "+cpu" not in text, "torch's local version would refuse PyTorch's other builds (make lock strips it)"
