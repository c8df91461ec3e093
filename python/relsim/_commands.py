"""The relsim commands as functions (docs/python.md): keyword arguments to
the command line's options, run in-process by the _relsim module, the output
parsed back."""
import csv
import difflib
import io
import json
import re
import sys

from . import _relsim


class InputError(ValueError):
    """Bad input: the message is the command line's one-line error, without its 'relsim: error: ' prefix."""


class CheckFailed(Exception):
    """The command ran but a check failed (exit code 1: a --require threshold, a live mismatch).

    `result` holds what the command printed, parsed as on success."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def _text(value):
    """One option value as the command line takes it."""
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back to the same double
    return str(value)


def _arguments(options):
    """--name=value for each keyword (name with _ written -): True a flag, False or None left out, a dict
    KEY=V,KEY=V (kinds={'cut': 1}), a list or tuple the option once per element (tune's lists)."""
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, dict):
            args.append(f"{flag}=" + ",".join(f"{k}={_text(v)}" for k, v in value.items()))
        elif isinstance(value, (list, tuple)):
            args.extend(f"{flag}={_text(v)}" for v in value)
        else:
            args.append(f"{flag}={_text(value)}")
    return args


def _progress_function(progress):
    """progress=True: a line on stderr as the work goes on; a callable: called with (done, total)."""
    if progress is True:
        def show(done, total):
            sys.stderr.write(f"\rrelsim: {done} of {total}" + ("\n" if done >= total else ""))
            sys.stderr.flush()
        return show
    if progress in (None, False):
        return None
    if not callable(progress):
        raise TypeError("progress must be True, False, None or a function of (done, total)")
    return progress


# Each command's long options, read from its --help when its function is made (_named).
_OPTIONS = {}


def _check_keywords(command, options):
    """An unknown keyword is a TypeError naming it and the nearest of the command's options, as Python says of
    any function's unexpected keyword."""
    known = _OPTIONS.get(command)
    if not known:
        return
    for name in options:
        if name.replace("_", "-") not in known:
            near = difflib.get_close_matches(name, [k.replace("-", "_") for k in known], n=1)
            hint = f": did you mean {near[0]!r}?" if near else f" (relsim {command} --help lists its options)"
            raise TypeError(f"relsim.{command}() got an unexpected keyword argument {name!r}{hint}")


def _run(command, options, output, positional=()):
    options = dict(options)
    progress = _progress_function(options.pop("progress", None))
    _check_keywords(command, options)
    args = [command, *(str(p) for p in positional), *_arguments(options), *output]
    code, out, message = _relsim.run(args, progress)
    _raise_for(code, message, command)
    return code, out, message


def _raise_for(code, message, command):
    """Exit codes but 0 and 1 as exceptions: 2 bad input, 130 interrupted, the rest an internal error."""
    if code == 2:
        raise InputError(message)
    if code == 130:
        raise KeyboardInterrupt
    if code not in (0, 1):
        raise RuntimeError(f"relsim {command}: {message}")


def run(*args, progress=None):
    """Any relsim command in-process, its arguments as on the command line: relsim.run("exact", "--p", 0.3, "--json")
    returns what `relsim exact --p 0.3 --json` prints. Raises as the command functions do."""
    args = [str(a) for a in args]
    code, out, message = _relsim.run(args, _progress_function(progress))
    _raise_for(code, message, " ".join(args[:1]))
    if code == 1:
        raise CheckFailed(f"relsim {' '.join(args[:1])}: {message or 'a check failed'}", out)
    return out


def _json_command(name):
    def command(*positional, **options):
        code, out, message = _run(name, options, ["--json"], positional)
        result = json.loads(out)
        if code == 1:
            raise CheckFailed(f"relsim {name}: {message or 'a check failed'}", result)
        return result
    return _named(command, name)


def _number(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _columns(text):
    """A CSV as a pandas DataFrame when pandas is importable, else a dict of columns (numbers as numbers)."""
    try:
        import pandas
    except ImportError:
        rows = list(csv.reader(io.StringIO(text)))
        header, body = rows[0], rows[1:]
        return {name: [_number(row[i]) for row in body] for i, name in enumerate(header)}
    return pandas.read_csv(io.StringIO(text), float_precision="round_trip")  # the very doubles the CSV holds


def _csv_command(name):
    def command(**options):
        code, out, message = _run(name, options, [])
        result = _columns(out)
        if code == 1:
            raise CheckFailed(f"relsim {name}: {message or 'a check failed'}", result)
        return result
    return _named(command, name)


def _lines_command(name):
    """A command that prints JSON Lines (plan): the list of its lines, each a dict."""
    def command(**options):
        _, out, _ = _run(name, options, [])
        return [json.loads(line) for line in out.splitlines() if line.strip()]
    return _named(command, name)


def _named(command, name):
    """The function's name, and its docstring from the command's own --help (its option table)."""
    command.__name__ = command.__qualname__ = name
    code, text, _ = _relsim.run([name, "--help"])
    _OPTIONS[name] = set(re.findall(r"^\s+(?:-\w,)?--([A-Za-z0-9][A-Za-z0-9-]*)", text, re.MULTILINE)) - {"help"}
    command.__doc__ = (f"relsim {name} in-process: keyword arguments are its long options with - written _ "
                       f"(progress=True shows progress on stderr); returns what --json prints.\n\n{text}"
                       if code == 0 else None)
    return command


exact = _json_command("exact")
simulate = _json_command("simulate")
fit = _json_command("fit")
audit = _json_command("audit")
tune = _json_command("tune")
fleet = _json_command("fleet")
advise = _json_command("advise")
oracle = _json_command("oracle")
sweep = _csv_command("sweep")
plan = _lines_command("plan")
