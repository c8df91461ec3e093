#!/usr/bin/env python3
"""Writes data/known_values.csv: exact P(success) of the simple policy.

Every value comes from a closed form evaluated in exact rational arithmetic
(fractions.Fraction), independently of the C++ engines, and is rounded to a
double only when printed (17 significant digits).

Gilbert (1960) two-state chain, state good/bad, one-step matrix
    P = [[1 - p0, p0], [1 - q, q]],  p0 = p(1 - q)/(1 - p),
with second eigenvalue lam = q - p0, so that
    P^m[bad -> bad]  = p + (1 - p) lam^m,
    P^m[good -> bad] = p - p lam^m.
Silent steps: a retry follows a bad request after 1 + b steps, the next
call's first request follows a good one after 1 + g steps. With
qb = P^(1+b)[bad -> bad] and p0g = P^(1+g)[good -> bad]:

fresh scope (docs/model.md, "Exact answers", with silent steps): request 0 is bad
with probability p, a call fails when its r + 1 requests are all bad, and a
successful call ends on a good request, so
    S = (1 - p qb^r) (1 - p0g qb^r)^(n - 1).

continuous scope: the chain runs on from one task's last request (good after
done, bad after env_error) to the next task's first, through P^(1+g). With
qg = P^(1+g)[bad -> bad],
    S_g = (1 - p0g qb^r)^n                       (previous task done),
    S_b = (1 - qg qb^r) (1 - p0g qb^r)^(n - 1)    (previous task env_error),
and the outcome of successive tasks is a two-state chain whose long-run
success is x = S_b / (1 - S_g + S_b). When S_g = 1 and S_b = 0 both outcomes
are absorbing; the Cesaro average is then the first (fresh) task's success.

Usage: scripts/known_values.py [output path]   (default data/known_values.csv
next to this script's folder). Python 3 standard library only.
"""
from fractions import Fraction
import os
import sys

SOURCE_CLOSED = "closed form (scripts/known_values.py)"
SOURCE_REFERENCE = "reference experiment (docs/model.md)"


def chain_numbers(p, q, b, g):
    """qb, p0g, qg as exact fractions (p = 1 forces q = 1, lam = 0)."""
    p0 = Fraction(1) if p == 1 else p * (1 - q) / (1 - p)
    assert 0 <= p0 <= 1, "invalid (p, q)"
    lam = q - p0

    def bad_bad(m):
        return p + (1 - p) * lam**m

    def good_bad(m):
        return p - p * lam**m

    return bad_bad(1 + b), good_bad(1 + g), bad_bad(1 + g)


def fresh_success(p, q, r, n, b, g):
    qb, p0g, _ = chain_numbers(p, q, b, g)
    return (1 - p * qb**r) * (1 - p0g * qb**r) ** (n - 1)


def continuous_success(p, q, r, n, b, g):
    qb, p0g, qg = chain_numbers(p, q, b, g)
    stay = (1 - p0g * qb**r) ** (n - 1)
    s_good = (1 - p0g * qb**r) * stay
    s_bad = (1 - qg * qb**r) * stay
    denominator = 1 - s_good + s_bad
    if denominator == 0:
        return fresh_success(p, q, r, n, b, g)
    return s_bad / denominator


# (p, q, r, n, b, g, chain, source); p and q as decimal strings, taken exactly.
CASES = [
    # the reference experiment's exact values (docs/model.md)
    ("0.3", "0.3", 2, 2, 0, 0, "fresh", SOURCE_REFERENCE),
    ("0.3", "0.8", 2, 2, 0, 0, "fresh", SOURCE_REFERENCE),
    # independent faults (q = p): (1 - p^(r+1))^n
    ("0.1", "0.1", 1, 5, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.5", "0.5", 3, 10, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.05", "0.05", 0, 20, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.3", "0.3", 2, 2, 3, 4, "fresh", SOURCE_CLOSED),
    # bursty, no silent steps
    ("0.2", "0.9", 4, 7, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.01", "0.6", 2, 50, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.4", "0.0", 1, 3, 0, 0, "fresh", SOURCE_CLOSED),
    # silent steps b, g > 0
    ("0.3", "0.8", 2, 2, 1, 0, "fresh", SOURCE_CLOSED),
    ("0.3", "0.8", 2, 2, 0, 1, "fresh", SOURCE_CLOSED),
    ("0.3", "0.8", 2, 2, 5, 3, "fresh", SOURCE_CLOSED),
    ("0.1", "0.95", 3, 8, 20, 2, "fresh", SOURCE_CLOSED),
    ("0.25", "0.1", 2, 4, 2, 7, "fresh", SOURCE_CLOSED),
    # continuous chain scope
    ("0.3", "0.8", 2, 2, 0, 0, "continuous", SOURCE_CLOSED),
    ("0.3", "0.3", 2, 2, 0, 0, "continuous", SOURCE_CLOSED),
    ("0.2", "0.9", 3, 5, 0, 0, "continuous", SOURCE_CLOSED),
    ("0.3", "0.8", 2, 2, 2, 3, "continuous", SOURCE_CLOSED),
    ("0.7", "0.9", 2, 3, 1, 0, "continuous", SOURCE_CLOSED),
    ("0.1", "0.99", 5, 20, 0, 10, "continuous", SOURCE_CLOSED),
    # edges: p = 0, p = 1 with q = 1, p > 1/2 with q at its lower bound
    ("0", "0", 2, 10, 0, 0, "fresh", SOURCE_CLOSED),
    ("0", "1", 2, 10, 0, 0, "continuous", SOURCE_CLOSED),
    ("1", "1", 3, 4, 0, 0, "fresh", SOURCE_CLOSED),
    ("1", "1", 3, 4, 2, 2, "continuous", SOURCE_CLOSED),
    ("0.8", "0.75", 2, 3, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.625", "0.4", 3, 2, 1, 1, "fresh", SOURCE_CLOSED),
    ("0.64", "0.4375", 2, 4, 0, 0, "continuous", SOURCE_CLOSED),
    ("0.5", "0", 1, 3, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.5", "0", 0, 3, 0, 0, "fresh", SOURCE_CLOSED),
    # q = 1 without p = 1: bad and good both absorbing (Cesaro limit)
    ("0.3", "1", 2, 5, 0, 0, "continuous", SOURCE_CLOSED),
    # p = 1/2, q = 0, odd b and g: a periodic chain, both task outcomes absorbing
    ("0.5", "0", 2, 3, 1, 1, "continuous", SOURCE_CLOSED),
    # r = 0: no retries
    ("0.3", "0.8", 0, 4, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.3", "0.8", 0, 4, 0, 2, "continuous", SOURCE_CLOSED),
    # large n
    ("0.05", "0.5", 3, 1000, 0, 0, "fresh", SOURCE_CLOSED),
    ("0.01", "0.3", 2, 1000, 1, 1, "continuous", SOURCE_CLOSED),
    ("0.001", "0.2", 2, 100000, 0, 0, "fresh", SOURCE_CLOSED),
]


def tolerance(n):
    # Each call costs the engine a rounding or two; 1e-12 absolute covers
    # n up to ten thousand, beyond that allow n times 1e-16.
    return max(1e-12, n * 1e-16)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "data", "known_values.csv")
    lines = [
        "# Known values of P(success) for the simple policy (docs/model.md).",
        "# Made by scripts/known_values.py from closed forms in exact rational",
        "# arithmetic (fractions.Fraction), independently of the C++ engines; do not",
        "# edit by hand, rerun the script. fresh: (1 - p qb^r)(1 - p0g qb^r)^(n-1);",
        "# continuous: S_b / (1 - S_g + S_b). See the script's docstring.",
        "p,q,r,n,b,g,chain,expected,tolerance,source",
    ]
    for p_text, q_text, r, n, b, g, chain, source in CASES:
        p, q = Fraction(p_text), Fraction(q_text)
        f = fresh_success if chain == "fresh" else continuous_success
        value = f(p, q, r, n, b, g)
        assert 0 <= value <= 1
        lines.append(f"{p_text},{q_text},{r},{n},{b},{g},{chain},{float(value):.17g},{tolerance(n):.3g},{source}")
    source_check()
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {len(CASES)} known values to {os.path.normpath(out)}")


def source_check():
    """The two reference values of docs/model.md and the continuous one."""
    assert fresh_success(Fraction("0.3"), Fraction("0.3"), 2, 2, 0, 0) == Fraction("0.946729")
    bursty = fresh_success(Fraction("0.3"), Fraction("0.8"), 2, 2, 0, 0)
    assert abs(float(bursty) - 0.763675428571428) < 1e-15
    cont = continuous_success(Fraction("0.3"), Fraction("0.8"), 2, 2, 0, 0)
    assert abs(float(cont) - 0.8121175185) < 1e-10


if __name__ == "__main__":
    main()
