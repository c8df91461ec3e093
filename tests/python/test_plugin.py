"""relsim.pytest_plugin (docs/python.md, The pytest plugin), run as a team would: a test file of their own, with a
small agent on httpx written here (retries at once, in two layers), run by pytest with -p relsim.pytest_plugin in
a pytester sandbox. The server is the real `relsim serve` on a free loopback port."""
import pytest

pytest_plugins = ["pytester"]

AGENT = '''
import json

import httpx


class Agent:
    """A small agent on httpx (the official Python SDK's transport): n model calls, each an inner retry loop (as an
    SDK's max_retries) inside an outer one (as a framework's retries around it), retrying at once."""

    def __init__(self, base_url, inner=0, outer=0, read_timeout=10.0):
        self.inner, self.outer = inner, outer
        self.client = httpx.Client(base_url=base_url, timeout=httpx.Timeout(10.0, read=read_timeout))

    def stream(self):
        """One streamed request: its events, parsed; raises on a bad status or a bad stream."""
        body = {"model": "m", "max_tokens": 16, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        headers = {"x-api-key": "test", "anthropic-version": "2023-06-01"}
        with self.client.stream("POST", "/v1/messages", json=body, headers=headers) as reply:
            reply.raise_for_status()
            return [json.loads(line[5:]) for line in reply.iter_lines() if line.startswith("data:")]

    def request(self):
        """True for a whole answer: every event parsed, the last message_stop."""
        try:
            events = self.stream()
        except (httpx.HTTPError, ValueError):
            return False
        return bool(events) and events[-1].get("type") == "message_stop"

    def call(self):
        return any(self.request() for _ in range(self.outer + 1) for _ in range(self.inner + 1))

    def run(self, n):
        return "done" if all(self.call() for _ in range(n)) else "env_error"
'''


def sandbox(pytester, tests):
    pytester.syspathinsert()
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(test_agent=tests)


def test_a_scripted_fault_and_the_log(pytester):
    sandbox(pytester, '''
import httpx
import pytest
from agent import Agent

def test_two_529s_then_ok(relsim_server):
    relsim_server.script(1, ["http_529", "http_529", "ok"])
    assert Agent(relsim_server.task_url(1), inner=3).call()
    assert len(relsim_server.log(1)) == 3
    assert relsim_server.task_url(1).startswith("http://127.0.0.1:")

def test_the_server_has_no_faults_unless_asked(relsim_server):
    relsim_server.script(2, ["ok"])
    assert Agent(relsim_server.task_url(2)).call()

def test_a_stalled_stream_raises_with_a_read_timeout(relsim_server):
    # The chapter's stall: the first events, then nothing. Without a read timeout httpx would wait for ever.
    relsim_server.script(3, ["stall"])
    with pytest.raises(httpx.ReadTimeout):
        Agent(relsim_server.task_url(3), read_timeout=0.5).stream()
    assert len(relsim_server.log(3)) == 1

def test_nested_retries_multiply(relsim_server):
    # 3 attempts of an SDK inside 4 of a framework: 12 requests for one call, all of them 529s.
    relsim_server.script(4, ["http_529"] * 12)
    assert not Agent(relsim_server.task_url(4), inner=2, outer=3).call()
    assert len(relsim_server.log(4)) == 3 * 4
''')
    result = pytester.runpytest("-p", "relsim.pytest_plugin")
    result.assert_outcomes(passed=4)


def test_a_plan_server_is_audited_and_has_the_exact_figures(pytester):
    sandbox(pytester, '''
import pytest
from agent import Agent

PLAN = dict(p=0.3, q=0.8, r=2, n=2, tasks=100, kinds="cut=1,http_529=1,malformed=1,overloaded=1")

def test_a_loop_that_follows_its_policy(relsim_server_factory):
    server = relsim_server_factory(**PLAN)
    for task in server.tasks:
        server.report(task, Agent(server.task_url(task), outer=2).run(n=2))
    audit = server.check(policy="simple", r=2, backoff_base=0)
    assert audit["mismatches"]["total"] == 0
    assert server.expected()["success"] == pytest.approx(0.763675, abs=1e-6)
    assert len(server.tasks) == 100

def test_a_loop_that_does_not(relsim_server_factory):
    # Declared as 2 retries a call, it retries once.
    server = relsim_server_factory(**dict(PLAN, tasks=40))
    for task in server.tasks:
        server.report(task, Agent(server.task_url(task), outer=1).run(n=2))
    audit = server.check(policy="simple", r=2, backoff_base=0)
    assert audit["mismatches"]["total"] > 0
    assert audit["mismatches"]["by_check"]["requests"] > 0
    assert audit["mismatches"]["first"][0]["requests_sent"] < audit["mismatches"]["first"][0]["requests_expected"]
''')
    result = pytester.runpytest("-p", "relsim.pytest_plugin")
    result.assert_outcomes(passed=2)


PLAN_TEST = '''
from agent import Agent

def test_bursty_faults(relsim_server_factory):
    server = relsim_server_factory(p=0.3, q=0.8, r=2, n=2, tasks=20, kinds="cut=1,http_529=1")
    for task in server.tasks:
        server.report(task, Agent(server.task_url(task), outer=2).run(n=2))
'''


def test_relsim_require_fails_the_session_when_a_bound_is_missed(pytester):
    sandbox(pytester, PLAN_TEST)
    missed = pytester.runpytest("-p", "relsim.pytest_plugin", "--relsim-require", "success>=0.99")
    assert missed.ret == 1
    missed.stdout.fnmatch_lines(["*relsim: --relsim-require missed: *test_bursty_faults*success*"])
    met = pytester.runpytest("-p", "relsim.pytest_plugin", "--relsim-require", "success>=0.1,requests_per_task<=6")
    assert met.ret == 0


def test_a_failing_test_names_its_servers_log(pytester):
    sandbox(pytester, '''
def test_fails(relsim_server):
    relsim_server.script(1, ["ok"])
    assert False
''')
    result = pytester.runpytest("-p", "relsim.pytest_plugin")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*relsim server logs*", "*relsim_requests.jsonl*"])


def test_a_missing_executable_is_said_in_one_line(pytester):
    sandbox(pytester, '''
def test_any(relsim_server):
    pass
''')
    result = pytester.runpytest("-p", "relsim.pytest_plugin", "--relsim-bin", "/nonexistent/relsim")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no relsim executable found*"])
