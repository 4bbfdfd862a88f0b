"""What scripts/bootstrap installs besides the test pins, and the check that users can install it.

    python scripts/requirements.py components conversation frontend recorder
        prints the requirements of these Home Assistant components and of the components they depend on, read from
        the installed homeassistant package's manifests (HA installs them at run time; tests need them up front).
    python scripts/requirements.py wheels MANIFEST CONSTRAINTS
        resolves MANIFEST's requirements under CONSTRAINTS (HA's package_constraints.txt) for CPython 3.14 on
        manylinux and musllinux (HA OS), x86_64 and aarch64, with binary wheels only, from the package index's
        metadata (pip --dry-run: nothing is built or installed). Exits 1 with the platform and pip's reason when a
        platform has no complete set of wheels.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

# Each target with every older tag its wheels may carry (pip matches --platform tags exactly).
PLATFORMS = {
    f"{libc}_{arch}": [f"{tag}_{arch}" for tag in tags]
    for arch in ("x86_64", "aarch64")
    for libc, tags in (
        ("manylinux_2_28", ["manylinux2014", *(f"manylinux_2_{minor}" for minor in range(17, 29))]),
        ("musllinux_1_2", ["musllinux_1_1", "musllinux_1_2"]),
    )
}


def component_requirements(names: list[str]) -> list[str]:
    """The requirements of ``names`` and of their dependencies, recursively, in first-seen order."""
    import homeassistant.components as components

    root = Path(components.__path__[0])
    seen: set[str] = set()
    requirements: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop(0)
        if name in seen or not (manifest := root / name / "manifest.json").exists():
            continue
        seen.add(name)
        data = json.loads(manifest.read_text())
        requirements += [r for r in data.get("requirements", []) if r not in requirements]
        todo += data.get("dependencies", [])
    return requirements


def check_wheels(manifest: Path, constraints: Path) -> int:
    """0 when every platform resolves with binary wheels only, else 1 (with pip's reason on stderr)."""
    requirements = json.loads(manifest.read_text())["requirements"]
    failures = 0
    for platform, tags in PLATFORMS.items():
        with tempfile.TemporaryDirectory() as target:
            report = Path(target) / "report.json"
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
                 "--only-binary=:all:", *(f"--platform={tag}" for tag in tags), "--python-version", "3.14", "--implementation", "cp",
                 "--abi", "cp314", "--target", target, "--report", str(report), "-c", str(constraints),
                 *requirements],
                capture_output=True, text=True, check=False,
            )
            if proc.returncode:
                failures += 1
                print(f"error: no complete set of cp314 {platform} wheels for {' '.join(requirements)} under "
                      f"{constraints}:\n{proc.stderr.strip()}", file=sys.stderr)
                continue
            resolved = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                        for item in json.loads(report.read_text())["install"]}
            print(f"wheels {platform}: " + " ".join(f"{n}=={resolved[n]}" for n in ("numpy", "pandas", "scipy", "openai")
                                                      if n in resolved))
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["components"]:
        print("\n".join(component_requirements(argv[1:])))
        return 0
    if argv[:1] == ["wheels"] and len(argv) == 3:
        return check_wheels(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
