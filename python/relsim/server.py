"""relsim's mock server as a child process, for tests (docs/python.md, The pytest plugin).

`relsim serve --port 0` picks a free loopback port itself and says it on its first line; this class starts it,
reads the port, drives its control API (docs/wire.md) over loopback with the standard library, and stops it."""
import json
import os
import shutil
import signal
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

from . import _commands


def find_binary(given=None):
    """The relsim executable: `given` (--relsim-bin), else $RELSIM, else the build tree's (this package in
    build/python/relsim/, the executable in build/), else an installed one (beside an installed package in
    /usr/lib/python3/dist-packages, /usr/bin/relsim; or relsim on PATH)."""
    if given:
        if Path(given).is_file() and os.access(given, os.X_OK):
            return str(given)
        raise FileNotFoundError(f"relsim: no relsim executable found at --relsim-bin {given}")
    candidates = [os.environ.get("RELSIM"), Path(__file__).resolve().parents[2] / "relsim",
                  Path(__file__).resolve().parents[4] / "bin" / "relsim", shutil.which("relsim")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise FileNotFoundError("relsim: no relsim executable found: give --relsim-bin PATH or set RELSIM "
                            "(looked in the build tree beside this package, the install prefix and PATH)")


class RelsimServer:
    """A running `relsim serve` on 127.0.0.1 (docs/wire.md). Stop it with stop(), or use it as a context manager."""

    def __init__(self, binary, log_path, plan_path=None, serve_options=None):
        self.log_path = Path(log_path)
        self.plan_path = Path(plan_path) if plan_path else None
        args = [binary, "serve", "--port", "0", "--log", str(self.log_path)]
        if self.plan_path:
            args += ["--plan", str(self.plan_path)]
        args += _commands._arguments(serve_options or {})
        # stderr to a file beside the log, and stdout drained after its first line: a full pipe would stop the server.
        self.stderr_path = self.log_path.with_suffix(".stderr")
        with open(self.stderr_path, "w") as stderr:
            self._process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr, text=True)
        line = self._process.stdout.readline()
        prefix = "relsim serve: listening on "
        if not line.startswith(prefix):
            self._process.kill()
            self._process.wait()
            raise RuntimeError(f"relsim serve did not start: {(line + self.stderr_path.read_text()).strip()}")
        self.base_url = line[len(prefix):].strip()
        threading.Thread(target=self._process.stdout.read, daemon=True).start()

    def task_url(self, task):
        """The base URL a client uses for task `task` (an SDK's baseURL): its requests go to /t/{task}/v1/..."""
        return f"{self.base_url}/t/{task}"

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as e:
            raise ValueError(f"relsim serve: {method} {path}: {e.code} {e.read().decode(errors='replace')}") from None

    def script(self, task, responses, fallback=None):
        """Sets the task's script: entries as docs/wire.md gives them (names such as 'http_529', or dicts)."""
        body = {"responses": list(responses)}
        if fallback is not None:
            body["fallback"] = list(fallback)
        return self._call("POST", f"/control/tasks/{task}/script", body)

    def release(self, task):
        """Releases the task's held stall and slow_headers replies; returns how many were waiting."""
        return self._call("POST", f"/control/tasks/{task}/release")["released"]

    def open_gate(self, name):
        """Opens a gate; returns how many replies were waiting at it."""
        return self._call("POST", f"/control/gates/{name}/open")["released"]

    def log(self, task):
        """The task's request log, a list of dicts (docs/wire.md, The request log)."""
        return self._call("GET", f"/control/tasks/{task}/log")["requests"]

    def report(self, task, outcome, detail=None):
        """Reports how the task ended as the client saw it (done, env_error, harness_error, crash, hang, ...)."""
        body = {"outcome": outcome}
        if detail is not None:
            body["detail"] = detail
        return self._call("POST", f"/control/tasks/{task}/outcome", body)

    def stop(self):
        """Stops the server (SIGTERM) and waits for it; the log file is then complete."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# Options of `relsim plan` that `relsim exact` does not take: the plan's own.
PLAN_ONLY = {"tasks", "seed", "lanes", "max_requests", "fault", "times", "dialect", "out"}
# Options of `relsim serve` (the rest are the plan's).
SERVE_OPTIONS = {"threads", "retry_after", "retry_after_ms", "max_connections", "read_timeout"}


class PlanServer(RelsimServer):
    """A server playing a plan drawn by `relsim plan` from `options` (its model, policy, tasks and seed), with the
    exact figures for that model and policy and the audit of everything the server saw."""

    def __init__(self, binary, folder, options):
        folder = Path(folder)
        self.options = {k: v for k, v in options.items() if k not in SERVE_OPTIONS}
        plan_path = folder / "plan.jsonl"
        _commands._run("plan", {**self.options, "out": str(plan_path)}, [])
        with open(plan_path) as plan:
            self.header = json.loads(plan.readline())
        super().__init__(binary, folder / "requests.jsonl", plan_path,
                         {k: v for k, v in options.items() if k in SERVE_OPTIONS})

    @property
    def tasks(self):
        """The plan's task numbers, 0 to tasks - 1."""
        return range(int(self.header["tasks"]))

    def expected(self):
        """The exact figures for the plan's model and policy, as `relsim exact --json` prints them."""
        return _commands.exact(**{k: v for k, v in self.options.items() if k not in PLAN_ONLY})

    def check(self, **audit_options):
        """The audit of everything the server saw against the plan, as `relsim audit --json` prints it, mismatches
        or not; audit's options as keywords (policy='layered', s=2, backoff_base=0, infer=True). It stops the
        server first, so that the log is whole."""
        self.stop()
        try:
            return _commands.audit(plan=str(self.plan_path), log=str(self.log_path), **audit_options)
        except _commands.CheckFailed as failed:  # audit exits 1 when a task mismatches: that is its answer here
            return failed.result

    def require(self, thresholds):
        """Raises relsim.CheckFailed, naming what was missed, when the audit (its policy inferred) misses any of
        `thresholds` (audit's --require, e.g. 'success>=0.99,requests_per_task<=5')."""
        self.stop()
        try:
            _commands.audit(plan=str(self.plan_path), log=str(self.log_path), infer=True, require=thresholds)
        except _commands.CheckFailed as failed:
            # Audit exits 1 for a task that mismatches too; only the thresholds count here (mismatches<=0 is one).
            if "threshold missed" in str(failed):
                raise
