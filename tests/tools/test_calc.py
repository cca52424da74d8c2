"""Safe calculator: arithmetic works, everything else is refused quickly."""
from __future__ import annotations

import math
import time

import pytest

from evidex.tools.calc import CalcError, calc_observation, calculate, format_result


@pytest.mark.parametrize(
    "expr, value",
    [
        ("1 + 2 * 3", 7),
        ("(71.2 - 68.9) / 68.9 * 100", (71.2 - 68.9) / 68.9 * 100),
        ("2 ** 10", 1024),
        ("2 ^ 10", 1024),
        ("7 // 2 + 7 % 2", 4),
        ("-(-3)", 3),
        ("sqrt(16) + log(100, 10) + log10(1000)", 9.0),
        ("exp(0) + abs(-2.5)", 3.5),
        ("round(3.14159, 2)", 3.14),
        ("max(1, 5, 3) - min(4, 2)", 3),
        ("floor(2.7) + ceil(2.1)", 5),
        ("pi * 2", 2 * math.pi),
        ("0.5 + tanh(1.0) + tanh(0)", 0.5 + math.tanh(1.0)),  # activations ML equations are written with
        ("sigmoid(0) + sigmoid(-1000) + sigmoid(2)", 0.5 + 1 / (1 + math.exp(-2))),
        ("pow(3, 4)", 81),
        ("2 ** -2", 0.25),
        ("cos(π/2 * 3/9) × 2 − 1 · 0.5 ÷ 2", math.cos(math.pi / 6) * 2 - 0.25),  # the signs papers print
    ],
)
def test_arithmetic(expr, value):
    assert calculate(expr) == pytest.approx(value)


ATTACKS = [
    "9 ** 9 ** 9",
    "2 ** 100000",
    "10 ** 10 ** 10",
    "pow(10, 100000)",
    "99999999999 ** 99999",
    "10.0 ** 400",
    "exp(100000)",
    "(1).__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "__import__('os').system('echo hi')",
    "open('/etc/passwd').read()",
    "eval('1+1')",
    "exec('x=1')",
    "globals()",
    "x",
    "os",
    "lambda: 1",
    "(lambda x: x)(1)",
    "[x for x in range(10)]",
    "{x: 1 for x in range(3)}",
    "(x for x in range(3))",
    "[1, 2, 3]",
    "{'a': 1}",
    "'abc' * 3",
    "b'abc'",
    "1 if 1 else 2",
    "1 < 2",
    "not 1",
    "1 and 2",
    "x := 3",
    "print(1)",
    "sqrt(x=4)",
    "math.sqrt(4)",
    "f'{1}'",
    "1; 2",
    "import os",
    "True + 1",
    "1 / 0",
    "5 % 0",
    "log(-1)",
    "sqrt(-1)",
    "(-8) ** (1/3)",
    "1" + "+1" * 400,
    "-" * 200 + "1",
    "(" * 240 + "1" + ")" * 240,
    "1e308 * 10",
    "round(1.5, 10**10)",
    "max(" + ",".join(["1"] * 50) + ")",
    "",
    "   ",
]


@pytest.mark.parametrize("expr", ATTACKS)
def test_attacks_are_refused_fast(expr):
    t = time.perf_counter()
    with pytest.raises(CalcError):
        calculate(expr)
    assert time.perf_counter() - t < 0.5


def test_observation_never_raises():
    assert calc_observation("2 * 21") == "The calculated result is: 42"
    assert calc_observation("__import__('os')").startswith("[Error]:")


def test_format_hides_float_noise():
    assert format_result(calculate("0.1 + 0.2")) == "0.3"
    assert format_result(calculate("10 / 4")) == "2.5"
    assert format_result(calculate("6 / 3")) == "2"
