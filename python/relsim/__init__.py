"""relsim from Python: the reliability simulator's engines, in-process.

Each command of the relsim executable is a function here, its keyword
arguments the command's long options with - written _, its result the dict
the command's --json prints (sweep: its CSV as a pandas DataFrame, or a dict
of columns without pandas). See docs/python.md.

    >>> import relsim
    >>> relsim.exact(p=0.3, q=0.8, r=2, n=2)["success"]
    0.763675...
"""
from ._commands import (
    CheckFailed,
    InputError,
    advise,
    audit,
    exact,
    fit,
    fleet,
    oracle,
    plan,
    run,
    simulate,
    sweep,
    tune,
)

__all__ = ["CheckFailed", "InputError", "advise", "audit", "exact", "fit", "fleet", "oracle", "plan", "run",
           "simulate", "sweep", "tune"]
