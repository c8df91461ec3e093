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
    (dict(p=0.3, q=0.1, r=2, n=2, burst_mean=3), ["--p", 0.3, "--q", 0.1, "--r", 2, "--n", 2, "--burst-mean", 3]),
])
def test_bad_input_raises_the_command_lines_message(options, args):
    code, out, err = command_line("exact", *args)
    assert code == 2 and out == ""
    with pytest.raises(relsim.InputError) as raised:
        relsim.exact(**options)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == err.strip().removeprefix("relsim: error: ")


def test_an_unknown_keyword_is_a_type_error_naming_the_nearest_option():
    with pytest.raises(TypeError, match=r"relsim.exact\(\) got an unexpected keyword argument 'burst_men': "
                                        r"did you mean 'burst_mean'\?"):
        relsim.exact(p=0.3, r=2, n=2, burst_men=5)
    with pytest.raises(TypeError, match="'zzz'"):
        relsim.simulate(p=0.3, r=2, n=2, zzz=1)


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


@pytest.mark.parametrize("command, options", [
    ("fleet", dict(replicates=100000)),
    ("tune", dict(target=0.99, n=20, t_good=600, t_bad=60, s_max=20, r_max=20, no_widen=True)),  # 1801 schedules
])
def test_ctrl_c_stops_fleet_and_tune(command, options):
    # fleet reports each replicate, tune each block of 512 schedules (a widened search counts again from 0).
    reports = []

    def interrupt_once(done, total):
        reports.append((done, total))
        if len(reports) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        getattr(relsim, command)(progress=interrupt_once, **options)
    assert 1 <= len(reports) <= 3
    assert reports[0][0] < reports[0][1]  # stopped well before the end
    assert relsim.exact(p=0.3, r=2, n=2)["success"] == pytest.approx((1 - 0.3 ** 3) ** 2, abs=1e-12)


def test_an_exception_in_the_progress_function_stops_the_run():
    def fail(done, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        relsim.simulate(p=0.3, q=0.8, r=2, n=2, tasks=10 ** 9, policy="layered", progress=fail)


def test_a_failed_check_raises_with_the_result():
    with pytest.raises(relsim.CheckFailed) as raised:
        relsim.exact(p=0.3, q=0.8, r=2, n=2, require="success>=0.9")
    assert raised.value.result["success"] == pytest.approx(0.763675, abs=1e-6)


def random_options(rng):
    """One random model and policy, as keywords and as the command line's arguments."""
    options = {"p": round(rng.uniform(0.01, 0.6), 4), "r": rng.randint(0, 4), "n": rng.randint(1, 12)}
    if rng.random() < 0.5:
        options["q"] = round(rng.uniform(options["p"], 0.95), 4)
    else:
        options["burst_mean"] = round(rng.uniform(1.0, 8.0), 3)
    policy = rng.choice(["simple", "naive", "layered", "budgeted"])
    options["policy"] = policy
    if policy != "simple":
        options["s"] = rng.randint(0, 3)
        options["kinds"] = rng.choice(["cut=1,http_529=2", "stall=1,overloaded=1,http_429=1", "http_500=1,no_stop=2"])
    if policy == "budgeted":
        options["B"] = rng.randint(1, (options["s"] + 1) * (options["r"] + 1))
    if rng.random() < 0.3:
        options["chain"] = "continuous"
    return options


def as_arguments(options):
    return [f"--{name.replace('_', '-')}={value}" for name, value in options.items()]


def assert_frame_is_csv(frame, text):
    """Every cell of the DataFrame is the CSV's: numbers as the same doubles, the rest as the same text."""
    import csv
    import io
    import math

    rows = list(csv.reader(io.StringIO(text)))
    assert list(frame.columns) == rows[0]
    assert len(frame) == len(rows) - 1
    for i, row in enumerate(rows[1:]):
        for name, cell in zip(rows[0], row):
            got = frame[name].iloc[i]
            if cell == "":  # an empty field (no simulation asked for) is pandas' NaN
                assert got != got, (name, i)
                continue
            try:
                want = float(cell)
            except ValueError:
                assert str(got) == cell, (name, i)
                continue
            assert (math.isnan(got) and math.isnan(want)) or float(got) == want, (name, i, got, cell)


AUDIT_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "audit")


def random_sweep(rng):
    """A sweep over p and r around a random point."""
    options = random_options(rng)
    options.pop("p"), options.pop("r"), options.pop("q", None)
    options.update(p=f"{rng.uniform(0.01, 0.3):.3f},{rng.uniform(0.3, 0.6):.3f}", r="0:2:1")
    options.setdefault("burst_mean", 3.0)
    return options


def random_fit(rng, folder, i):
    """A random plan written to a file, and fit's options: the file, a prediction, sometimes SDK retries."""
    p = round(rng.uniform(0.02, 0.4), 3)
    plan = folder / f"plan{i}.jsonl"
    relsim.plan(p=p, q=round(rng.uniform(p, 0.9), 3), r=rng.randint(1, 3), n=rng.randint(2, 8),
                tasks=rng.randint(200, 2000), seed=rng.randint(0, 2 ** 32), out=str(plan))
    options = {"predict": f"policy=layered,s={rng.randint(0, 3)},r={rng.randint(0, 3)},n={rng.randint(1, 20)}"}
    if rng.random() < 0.3:
        options["sdk_retries"] = rng.randint(1, 3)
    return [str(plan)], options


def random_audit(rng):
    """The audit fixture's log of a naive loop against a random policy, schedule and acceptance."""
    options = {"plan": os.path.join(AUDIT_DATA, "plan.jsonl"), "log": os.path.join(AUDIT_DATA, "naive_log.jsonl")}
    if rng.random() < 0.25:
        options["infer"] = True
    else:
        options.update(policy=rng.choice(["simple", "naive", "layered", "budgeted"]), s=rng.randint(0, 3),
                       r=rng.randint(0, 3))
        if options["policy"] == "budgeted":
            options["B"] = rng.randint(1, (options["s"] + 1) * (options["r"] + 1))
    choice = rng.random()
    if choice < 0.25:
        options["backoff"] = rng.choice(["sdk", "none", "exp:0.5,8,0.25", "list:1,2,4"])
    elif choice < 0.5:
        options.update(backoff_base=rng.choice([0, 0.5, 1]), backoff_cap=rng.choice([4, 8]))
    elif choice < 0.6:
        options["no_wait_check"] = True
    if rng.random() < 0.3:
        options["accept"] = rng.choice(["no_stop=done", "stall=hang", "slow_headers=crash,no_stop=done"])
    if rng.random() < 0.3:
        options["wait_tolerance"] = round(rng.uniform(0, 2), 2)
    if rng.random() < 0.3:
        options["per_task"] = True
    return options


def json_either_way(function, *positional, **options):
    """What a function returns, or the result a CheckFailed carries (audit's mismatches are exit 1)."""
    try:
        return function(*positional, **options)
    except relsim.CheckFailed as failed:
        return failed.result


def cli_json_either_way(*args):
    code, out, err = command_line(*args, "--json")
    assert code in (0, 1), err
    return json.loads(out)


def test_random_option_sets_equal_the_command_line(tmp_path):
    # 50 sets here, 10 for each of exact, simulate, sweep, fit and audit; RELSIM_EQUALITY_SETS=200 runs more.
    import random

    sets = int(os.environ.get("RELSIM_EQUALITY_SETS", "50"))
    rng = random.Random(20261206)
    compared = {"exact": 0, "simulate": 0, "sweep": 0, "fit": 0, "audit": 0}
    for i in range(sets):
        command = list(compared)[i % 5]
        if command == "exact":
            options = random_options(rng)
            assert relsim.exact(**options) == cli_json("exact", *as_arguments(options)), options
        elif command == "simulate":
            options = random_options(rng)
            options.update(tasks=rng.randint(1000, 20000), seed=rng.randint(0, 2 ** 63))
            got = relsim.simulate(**options)
            want = cli_json("simulate", *as_arguments(options))
            got.pop("kernel", None), want.pop("kernel", None)  # which kernel ran: the numbers are the same
            assert got == want, options
        elif command == "sweep":
            options = random_sweep(rng)
            code, out, err = command_line("sweep", *as_arguments(options))
            assert code == 0, err
            assert_frame_is_csv(relsim.sweep(**options), out)
        elif command == "fit":
            files, options = random_fit(rng, tmp_path, i)
            assert relsim.fit(*files, **options) == cli_json("fit", *files, *as_arguments(options)), options
        else:
            options = random_audit(rng)
            got = json_either_way(relsim.audit, **options)
            assert got == cli_json_either_way("audit", *as_arguments(options)), options
        compared[command] += 1
    assert sum(compared.values()) == sets and min(compared.values()) >= sets // 5


# One bad value for each of many options, across the commands: relsim.InputError carries the command line's text.
BAD_VALUES = [
    ("exact", {"p": 1.2, "r": 2, "n": 2}), ("exact", {"p": -0.1, "r": 2, "n": 2}),
    ("exact", {"p": 0.3, "q": 1.5, "r": 2, "n": 2}), ("exact", {"p": 0.3, "r": -1, "n": 2}),
    ("exact", {"p": 0.3, "r": 2, "n": 0}), ("exact", {"p": 0.3, "burst_mean": 0.5, "r": 2, "n": 2}),
    ("exact", {"p": 0.3, "r": 2, "n": 2, "policy": "greedy"}), ("exact", {"p": 0.3, "r": 2, "n": 2, "chain": "warm"}),
    ("exact", {"t_good": -5, "t_bad": 10, "r": 2, "n": 2}),
    ("exact", {"p": 0.3, "r": 2, "n": 2, "input_tokens": 1.5, "output_tokens": 8, "price_in": 3, "price_out": 15}),
    ("exact", {"p": 0.3, "r": 2, "n": 2, "fallback_after": 9, "p2": 0.1}),
    ("simulate", {"p": 0.3, "r": 2, "n": 2, "tasks": 0}), ("simulate", {"p": 0.3, "r": 2, "n": 2, "confidence": 1.5}),
    ("simulate", {"p": 0.3, "r": 2, "n": 2, "interval": "exact"}), ("simulate", {"p": 0.3, "r": 2, "n": 2, "lanes": 0}),
    ("sweep", {"p": "0.1:0.5:0", "r": 2, "n": 2}), ("sweep", {"p": "0.1,2", "r": 2, "n": 2, "strict": True}),
    ("tune", {"target": 1.5, "n": 5, "t_good": 300, "t_bad": 60}),
    ("plan", {"p": 0.3, "r": 2, "n": 2, "tasks": -3}),
]


@pytest.mark.parametrize("command, options", BAD_VALUES)
def test_every_range_error_is_the_command_lines(command, options):
    code, out, err = command_line(command, *as_arguments(options))
    assert code == 2 and out == "", (code, out)
    with pytest.raises(relsim.InputError) as raised:
        getattr(relsim, command)(**options)
    assert str(raised.value) == err.strip().removeprefix("relsim: error: ")


def test_a_server_that_cannot_start_raises_with_its_stderr(tmp_path):
    from relsim.server import RelsimServer

    code, _, err = command_line("serve", "--port", 0, "--max-connections", 0)
    assert code == 2
    with pytest.raises(RuntimeError) as raised:
        RelsimServer(RELSIM, tmp_path / "requests.jsonl", serve_options={"max_connections": 0})
    assert str(raised.value) == "relsim serve did not start: " + err.strip()
