"""import relsim (docs/python.md): each function's result is what the command line's --json prints, value for
value; bad input raises relsim.InputError with the command line's message; the GIL is released while an engine
runs; Ctrl-C stops a long run and leaves the process usable; nothing is printed on import.

RELSIM names this build's relsim executable (ctest sets it, and PYTHONPATH to build/python)."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import relsim

RELSIM = os.environ.get("RELSIM", os.path.join(os.path.dirname(__file__), "..", "..", "build", "relsim"))


def command_line(*args):
    """relsim's own output for these arguments: (exit code, stdout, stderr)."""
    res = subprocess.run([RELSIM, *map(str, args)], capture_output=True, text=True)
    return res.returncode, res.stdout, res.stderr


def cli_json(*args):
    code, out, err = command_line(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_import_prints_nothing():
    res = subprocess.run([sys.executable, "-c", "import relsim"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "" and res.stderr == ""


def test_the_known_values_come_back():
    # Outside references: (1 - 0.3^3)^2 for independent faults, and the bursty reference experiment.
    assert relsim.exact(p=0.3, r=2, n=2)["success"] == pytest.approx((1 - 0.3 ** 3) ** 2, abs=1e-12)
    assert round(relsim.exact(p=0.3, q=0.8, r=2, n=2)["success"], 4) == 0.7637


@pytest.mark.parametrize("options, args", [
    (dict(p=0.02, burst_mean=5, n=30, r=3), ["--p", 0.02, "--burst-mean", 5, "--n", 30, "--r", 3]),
    (dict(p=0.3, q=0.8, r=2, n=4, kinds={"cut": 1, "http_529": 2}, input_tokens=20000, output_tokens=800,
          price_in=3, price_out=15, fallback_after=2, p2=0.1),
     ["--p", 0.3, "--q", 0.8, "--r", 2, "--n", 4, "--kinds", "cut=1,http_529=2", "--input-tokens", 20000,
      "--output-tokens", 800, "--price-in", 3, "--price-out", 15, "--fallback-after", 2, "--p2", 0.1]),
    (dict(t_good=600, t_bad=60, r=2, n=3, request_seconds=2, policy="layered", s=2),
     ["--t-good", 600, "--t-bad", 60, "--r", 2, "--n", 3, "--request-seconds", 2, "--policy", "layered", "--s", 2]),
])
def test_exact_is_the_command_lines_json(options, args):
    assert relsim.exact(**options) == cli_json("exact", *args)


def test_simulate_is_the_command_lines_json_for_any_thread_count():
    args = ["--p", 0.3, "--q", 0.8, "--r", 2, "--n", 2, "--tasks", 200000, "--seed", 7]
    want = cli_json("simulate", *args)
    for threads in (1, 2):
        got = relsim.simulate(p=0.3, q=0.8, r=2, n=2, tasks=200000, seed=7, threads=threads)
        got.pop("kernel"), want.pop("kernel", None)  # which kernel ran: the numbers are the same on every one
        assert got == want


def test_kinds_as_a_dict_or_a_string_are_one():
    a = relsim.exact(p=0.3, q=0.8, r=2, n=2, policy="layered", s=1, kinds={"cut": 1, "http_529": 2})
    b = relsim.exact(p=0.3, q=0.8, r=2, n=2, policy="layered", s=1, kinds="cut=1,http_529=2")
    assert a == b


def test_sweep_is_the_command_lines_csv():
    code, out, err = command_line("sweep", "--p", "0.1,0.3", "--q", "0.5,0.8", "--r", 2, "--n", 2)
    assert code == 0, err
    frame = relsim.sweep(p="0.1,0.3", q="0.5,0.8", r=2, n=2)
    assert list(frame.columns) == out.splitlines()[0].split(",")
    assert len(frame) == len(out.splitlines()) - 1 == 4
    assert frame["exact"].tolist() == pytest.approx([float(line.split(",")[list(frame.columns).index("exact")])
                                                    for line in out.splitlines()[1:]], abs=0)


def test_plan_is_the_command_lines_lines():
    code, out, err = command_line("plan", "--p", 0.3, "--q", 0.8, "--r", 2, "--n", 2, "--tasks", 5)
    assert code == 0, err
    assert relsim.plan(p=0.3, q=0.8, r=2, n=2, tasks=5) == [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("options, args", [
    (dict(p=1.2, r=2, n=2), ["--p", 1.2, "--r", 2, "--n", 2]),
    (dict(p=0.3, r=2, n=2, kinds="cut=x"), ["--p", 0.3, "--r", 2, "--n", 2, "--kinds", "cut=x"]),
    (dict(p=0.3, r=2, n=2, no_such_option=1), ["--p", 0.3, "--r", 2, "--n", 2, "--no-such-option", 1]),
])
def test_bad_input_raises_the_command_lines_message(options, args):
    code, out, err = command_line("exact", *args)
    assert code == 2 and out == ""
    with pytest.raises(relsim.InputError) as raised:
        relsim.exact(**options)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == err.strip().removeprefix("relsim: error: ")


def test_help_reads_like_the_command_lines():
    code, out, _ = command_line("exact", "--help")
    assert code == 0
    assert out in relsim.exact.__doc__
    assert "--burst-mean" in relsim.simulate.__doc__


def test_another_thread_runs_while_an_engine_does():
    # With a switch interval far longer than the test, a thread holding the GIL is never made to give it up:
    # the main thread below runs during the simulation only if the engine released it. Without that it would
    # count nothing until the worker is done, however many runs the worker makes.
    count = [0]
    done = threading.Event()

    def worker():
        for _ in range(50):
            relsim.simulate(t_good=60, t_bad=20, r=2, n=4, tasks=100000)
            if count[0] >= 20:
                break
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        while not done.is_set():
            count[0] += 1
            time.sleep(0.001)  # gives the GIL up, and takes it back only when the worker lets it go
        thread.join()
    finally:
        sys.setswitchinterval(old)
    assert count[0] >= 20


def test_ctrl_c_stops_a_long_simulation_and_the_process_goes_on():
    reports = []

    def interrupt_once(done, total):
        reports.append(done)
        if len(reports) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        relsim.simulate(p=0.3, q=0.8, r=2, n=2, tasks=10 ** 12, policy="layered", progress=interrupt_once)
    assert 1 <= len(reports) <= 3  # stopped at the report after the signal
    assert relsim.exact(p=0.3, q=0.8, r=2, n=2)["success"] == pytest.approx(0.763675, abs=1e-6)


def test_an_exception_in_the_progress_function_stops_the_run():
    def fail(done, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        relsim.simulate(p=0.3, q=0.8, r=2, n=2, tasks=10 ** 9, policy="layered", progress=fail)


def test_a_failed_check_raises_with_the_result():
    with pytest.raises(relsim.CheckFailed) as raised:
        relsim.exact(p=0.3, q=0.8, r=2, n=2, require="success>=0.9")
    assert raised.value.result["success"] == pytest.approx(0.763675, abs=1e-6)
