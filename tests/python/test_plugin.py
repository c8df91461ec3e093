"""relsim.pytest_plugin (docs/python.md, The pytest plugin), run as a team would: a test file of their own, with a
small agent loop written here (retry any failed request, no backoff: the simple policy), run by pytest with
-p relsim.pytest_plugin in a pytester sandbox. The server is the real `relsim serve` on a free loopback port."""
import pytest

pytest_plugins = ["pytester"]

AGENT = '''
import http.client
import json
import urllib.error
import urllib.request


def call(base_url):
    """One streaming request to the mock's messages endpoint: True when every event parses and the last is
    message_stop."""
    body = json.dumps({"model": "m", "max_tokens": 16, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(base_url + "/v1/messages", data=body, headers={
        "content-type": "application/json", "x-api-key": "test", "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            text = reply.read().decode(errors="replace")
    except (urllib.error.URLError, http.client.HTTPException, OSError):
        return False
    try:  # every event must parse, and the last must end the message
        events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    except ValueError:
        return False
    return bool(events) and events[-1].get("type") == "message_stop"


def run_task(base_url, n, r):
    """n calls, each retried up to r times at once: the simple policy."""
    for _ in range(n):
        if not any(call(base_url) for _ in range(r + 1)):
            return "env_error"
    return "done"
'''


def sandbox(pytester, tests):
    pytester.syspathinsert()
    pytester.makepyfile(agent=AGENT)
    pytester.makepyfile(test_agent=tests)


def test_a_scripted_fault_and_the_log(pytester):
    sandbox(pytester, '''
from agent import run_task

def test_two_529s_then_ok(relsim_server):
    relsim_server.script(1, ["http_529", "http_529", "ok"])
    assert run_task(relsim_server.task_url(1), n=1, r=3) == "done"
    assert len(relsim_server.log(1)) == 3
    assert relsim_server.task_url(1).startswith("http://127.0.0.1:")

def test_the_server_has_no_faults_unless_asked(relsim_server):
    relsim_server.script(2, ["ok"])
    assert run_task(relsim_server.task_url(2), n=1, r=0) == "done"
''')
    result = pytester.runpytest("-p", "relsim.pytest_plugin")
    result.assert_outcomes(passed=2)


def test_a_plan_server_is_audited_and_has_the_exact_figures(pytester):
    sandbox(pytester, '''
import pytest
from agent import run_task

def test_bursty_faults(relsim_server_factory):
    server = relsim_server_factory(p=0.3, q=0.8, r=2, n=2, tasks=40, kinds="cut=1,http_529=1,malformed=1")
    done = 0
    for task in server.tasks:
        outcome = run_task(server.task_url(task), n=2, r=2)
        server.report(task, outcome)
        done += outcome == "done"
    audit = server.check(policy="simple", r=2, backoff_base=0)
    assert audit["mismatches"]["total"] == 0
    assert server.expected()["success"] == pytest.approx(0.763675, abs=1e-6)
    assert len(server.tasks) == 40 and 10 < done < 40
''')
    result = pytester.runpytest("-p", "relsim.pytest_plugin")
    result.assert_outcomes(passed=1)


PLAN_TEST = '''
from agent import run_task

def test_bursty_faults(relsim_server_factory):
    server = relsim_server_factory(p=0.3, q=0.8, r=2, n=2, tasks=20, kinds="cut=1,http_529=1")
    for task in server.tasks:
        server.report(task, run_task(server.task_url(task), n=2, r=2))
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
