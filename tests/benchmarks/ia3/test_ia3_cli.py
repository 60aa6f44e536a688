"""``python -m benchmarks.ia3``: the JSON report, and one line on stderr for bad options."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.ia3.__main__ import main

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "benchmarks" / "ia3"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.ia3", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_successful_tiny_run_writes_the_json_report(tmp_path):
    out = tmp_path / "report.json"
    result = _cli(
        "--preset",
        "tiny",
        "--task",
        "promoter_all",
        "--steps",
        "6",
        "--warmup-steps",
        "1",
        "--batch-size",
        "4",
        "--device",
        "cpu",
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert (report["preset"], report["steps"], report["batch_size"]) == ("tiny", 6, 4)
    assert "steps/s" in result.stdout


def test_an_unknown_preset_exits_non_zero_with_one_line_on_stderr():
    result = _cli("--preset", "huge")
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1
    assert "invalid choice: 'huge'" in result.stderr


def test_json_dash_prints_only_the_json(capsys):
    assert main(["--steps", "3", "--warmup-steps", "1", "--device", "cpu", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 3


def test_plain_runs_the_stock_forwards(capsys):
    assert main(["--steps", "2", "--warmup-steps", "0", "--device", "cpu", "--plain", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["fast_path"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--steps", "0"], "argument --steps: must be greater than 0"),
        (["--task", "nope"], "argument --task: invalid choice"),
        (["--data", "/no/such/place"], "no such file or directory"),
        (["--steps", "2", "--warmup-steps", "2"], "fewer than steps"),
    ],
)
def test_a_bad_option_exits_non_zero_with_one_line_saying_why(capsys, args, message):
    try:
        status = main(args)
    except SystemExit as exit:
        status = exit.code
    assert status != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err


def test_an_unreadable_task_file_exits_with_one_line(capsys, tmp_path):
    (tmp_path / "train.csv").write_text("sequence,label\nACGTXX,0\n")
    assert main(["--steps", "2", "--warmup-steps", "0", "--data", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "invalid character 'X'" in err


def test_the_package_never_imports_django():
    sources = [path.read_text() for path in PACKAGE.rglob("*.py")]
    assert sources and not any(re.search(r"^\s*(import|from)\s+django\b", s, re.MULTILINE) for s in sources)
