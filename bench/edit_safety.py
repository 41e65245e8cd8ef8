"""Benchmark jupyter-copilot: the randomized edit-safety proof, run long.

Runs the state machine of ``tests/editsafety.py`` (real JupyterLab in headless Chromium,
the real server, an agent over the real MCP client) for ``--sequences N`` random sequences,
half without and half with real-time collaboration, through the same pytest module CI runs
with a small budget. Every violation is counted instead of shrunk; each is printed with
the steps that led to it and the seed that replays the run:

    EDIT_SAFETY_SEED=<seed> python -m pytest tests/test_edit_safety.py

The last line is exactly ``violations: V of N sequences``; the exit status is 1 when V > 0
or when a mode did not run all its sequences.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("solo", "collaboration")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=500, help="in all, split between modes")
    parser.add_argument("--steps", type=int, default=25, help="most steps in one sequence")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="10 sequences of up to 15 steps")
    args = parser.parse_args()
    sequences, steps = (10, 15) if args.quick else (args.sequences, args.steps)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    shares = {"solo": (sequences + 1) // 2, "collaboration": sequences // 2}
    print(f"edit safety: {sequences} sequences of up to {steps} steps, seed {seed}", flush=True)

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in MODES:
            if not shares[mode]:
                continue
            report = Path(tmp) / f"{mode}.jsonl"
            started = time.monotonic()
            exit_code = run_mode(mode, shares[mode], steps, seed, report)
            figures = read_report(report)
            if figures is None:
                print(f"{mode}: the run ended before it reported (pytest exit {exit_code})")
                figures = {"mode": mode, "sequences": 0, "violations": [{"error": "no report"}]}
            figures["mode"] = mode
            figures["wall_seconds"] = time.monotonic() - started
            runs.append((figures, shares[mode]))
            print_mode(figures)

    violating = sum(len({v.get("sequence") for v in f["violations"]}) for f, _ in runs)
    short = [f["mode"] for f, share in runs if f["sequences"] < share]
    if short:
        print(f"runs that ended early: {', '.join(short)}")
    total = {key: sum(f.get(key, 0) for f, _ in runs) for key in FIGURES}
    print(
        "total: "
        + ", ".join(f"{total[key]} {label}" for key, label in FIGURES.items())
        + f", seed {seed}"
    )
    # Hypothesis may run a few more sequences than asked; all of them count.
    print(f"violations: {violating} of {max(sequences, total['sequences'])} sequences")
    return 1 if violating or short else 0


#: Figures of a run and how they are printed.
FIGURES = {
    "sequences": "sequences",
    "steps": "steps",
    "keystrokes": "keystrokes typed",
    "proposals": "proposals",
    "refused_proposals": "refused proposals",
    "keeps": "Keeps applied",
    "refused_keeps": "Keeps refused",
    "inserts": "new cells proposed",
    "inserts_kept": "new cells kept",
    "notebook_undos": "notebook undos of a new cell",
    "runs": "run requests",
    "runs_done": "runs allowed and done",
    "keyboard_undos": "keyboard undos",
    "reloads": "reloads",
}


def run_mode(mode: str, sequences: int, steps: int, seed: int, report: Path) -> int:
    """Run the pytest module for one mode, counting violations; return pytest's exit code."""
    env = dict(
        os.environ,
        EDIT_SAFETY_SEQUENCES=str(sequences),
        EDIT_SAFETY_STEPS=str(steps),
        EDIT_SAFETY_SEED=str(seed),
        EDIT_SAFETY_REPORT=str(report),
        EDIT_SAFETY_COUNT="1",
        EDIT_SAFETY_TIMEOUT=str(max(1800, sequences * 60)),
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        f"tests/test_edit_safety.py::test_no_keystroke_is_lost_and_nothing_is_written_without_keep[{mode}]",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    log = report.with_suffix(".log")
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        # What pytest said at the end: a failure outside the sequences, or their summary.
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-60:]
        print(f"{mode}: pytest exited {done.returncode}; the end of its output:")
        print("\n".join("    " + line for line in tail))
    return done.returncode


def read_report(report: Path) -> dict | None:
    try:
        lines = report.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return json.loads(lines[-1]) if lines else None


def print_mode(figures: dict) -> None:
    minutes = figures.get("wall_seconds", 0.0) / 60
    print(
        f"{figures['mode']}: "
        + ", ".join(f"{figures.get(key, 0)} {label}" for key, label in FIGURES.items())
        + f" in {minutes:.1f} min"
    )
    for violation in figures["violations"]:
        print(f"  VIOLATION in sequence {violation.get('sequence')}: {violation['error']}")
        steps = violation.get("steps")
        if steps:
            print("    steps: " + "; ".join(steps))


if __name__ == "__main__":
    sys.exit(main())
