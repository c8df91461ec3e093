"""relsim's pytest plugin (docs/python.md, The pytest plugin): bursty faults in a team's own agent tests.

Load it with `pytest -p relsim.pytest_plugin` (an installed package also registers it as a pytest11 entry point).

Fixtures, named as pytest's own server plugins name theirs:
  relsim_server          a function-scoped `relsim serve` on a free loopback port, no faults unless a test scripts
                         them: base_url, task_url(task), script(task, responses), release(task), open_gate(name),
                         log(task), report(task, outcome)
  relsim_server_factory  a callable taking `relsim plan`'s and `relsim serve`'s options as keywords (p, q or
                         burst_mean, r, n, kinds, tasks, seed, policy, s, ...) that returns a server playing that plan,
                         with the same methods and tasks, expected() (relsim exact --json) and check(**audit_options)
                         (relsim audit --json)

Options:
  --relsim-bin PATH      the relsim executable (default: $RELSIM, the build tree's, an installed one)
  --relsim-require SPEC  audit's thresholds (success>=0.99,requests_per_task<=5,...): every plan server is audited at
                         the end of its test, and the session fails when one misses them

Each server's request log is kept under the test's tmp_path; when a test fails, its report names the log."""
import pytest

from . import _commands
from .server import PlanServer, RelsimServer, find_binary


def pytest_addoption(parser):
    group = parser.getgroup("relsim", "relsim's mock server (docs/python.md)")
    group.addoption("--relsim-bin", default=None, help="the relsim executable; default $RELSIM, the build tree's, "
                    "or an installed one")
    group.addoption("--relsim-require", default=None,
                    help="thresholds every plan server's audit must meet, as relsim audit --require takes them "
                         "(e.g. success>=0.99,requests_per_task<=5); a miss fails the session")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    logs = getattr(item, "_relsim_logs", [])
    if report.failed and logs:
        report.sections.append(("relsim server logs", "\n".join(str(path) for path in logs)))


def _remember(request, server):
    request.node._relsim_logs = getattr(request.node, "_relsim_logs", []) + [server.log_path]


@pytest.fixture
def relsim_server(request, tmp_path):
    """A `relsim serve` for this test on a free 127.0.0.1 port, no faults unless the test scripts them."""
    server = RelsimServer(find_binary(request.config.getoption("relsim_bin")), tmp_path / "relsim_requests.jsonl")
    _remember(request, server)
    yield server
    server.stop()


@pytest.fixture
def relsim_server_factory(request, tmp_path):
    """relsim_server_factory(p=0.3, q=0.8, r=2, n=2, tasks=20, ...): a server playing the plan those options draw."""
    binary = find_binary(request.config.getoption("relsim_bin"))
    servers = []

    def make(**options):
        folder = tmp_path / f"relsim_plan_{len(servers)}"
        folder.mkdir()
        server = PlanServer(binary, folder, options)
        servers.append(server)
        _remember(request, server)
        return server

    yield make
    require = request.config.getoption("relsim_require")
    for server in servers:
        server.stop()
        if require:
            _check_required(request, server, require)


def _check_required(request, server, require):
    try:
        server.require(require)
    except _commands.CheckFailed as failed:
        request.config._relsim_missed = getattr(request.config, "_relsim_missed", []) + [
            f"{request.node.nodeid}: {failed}"]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for line in getattr(config, "_relsim_missed", []):
        terminalreporter.write_line(f"relsim: --relsim-require missed: {line}", red=True)


def pytest_sessionfinish(session, exitstatus):
    if getattr(session.config, "_relsim_missed", None) and session.exitstatus == 0:
        session.exitstatus = 1
