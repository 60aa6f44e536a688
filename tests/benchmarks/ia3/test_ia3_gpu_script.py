"""``bench/gpu_ia3.py --smoke``: the GPU check's whole plan, end to end on a CPU with tiny presets,
so the one device run it gets cannot fail for a reason a CPU could have shown."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_gpu_script_runs_its_whole_plan_on_tiny_presets_and_writes_its_reports(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OUT": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "bench/gpu_ia3.py", "--smoke", "--device", "cpu", "--folder", "smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    folder = tmp_path / "smoke"  # $OUT is the default --out, as on the device machine
    check = json.loads((folder / "0-check.json").read_text())
    assert check["agrees"] and check["captured"] == "none"  # no CUDA graph on a CPU
    reports = {path.name: json.loads(path.read_text()) for path in folder.glob("[1-4]-*.json")}
    assert sorted(reports) == [
        "1-tiny-12-steps-fast.json",
        "2-tiny-8-steps-plain.json",
        "3-tiny-v2-8-steps-fast.json",
        "4-tiny-8-steps-fast.json",
    ]
    assert [r["fast_path"] for _, r in sorted(reports.items())] == [True, False, True, True]
    assert all(r["task"] == "splice_sites_all" and r["batch_size"] == 8 for r in reports.values())
    summary = (folder / "summary.md").read_text()
    assert summary.count("\n| nt-") == 4 and "Fast over plain path" in summary and "agrees" in summary
