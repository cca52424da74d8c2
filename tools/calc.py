"""Safe arithmetic for agents: ``calculate("(3.2 + 4.8) / 2")`` -> 4.0. Never uses eval.

The expression is parsed with ``ast`` and walked over a whitelist: numbers, + - * / // % **, unary +/-,
parentheses, comparisons are NOT allowed, and a few math functions/constants. Names, attributes, calls of
anything else, subscripts, lambdas, comprehensions, strings and containers are refused. Size limits stop
resource attacks: expression length, AST node count and depth, exponent size and result magnitude.
"""
from __future__ import annotations

import ast
import math
import sys

from pydantic import BaseModel, Field

MAX_EXPR_CHARS = 500
MAX_NODES = 200
MAX_DEPTH = 30
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e300
MAX_INT_DIGITS = 400


def _sigmoid(x: float) -> float:
    """The logistic function 1 / (1 + e^-x), without overflow for a large negative x."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


FUNCTIONS = {
    "sqrt": math.sqrt,
    "log": math.log,  # log(x) or log(x, base)
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    # the activations equations in machine-learning papers are written with (a fusion "Yc + tanh(Yt)", a gate "σ(x)")
    "tanh": math.tanh,
    "sigmoid": _sigmoid,
    "pow": None,  # handled as ** with the same limits
}
CONSTANTS = {"pi": math.pi, "e": math.e}


class CalcError(ValueError):
    """The expression is not allowed or cannot be computed; the message says why."""


# the example agents are shown (their prompts and this tool's description): a small model copies it as its own
EXAMPLE_EXPRESSION = "(71.2 - 68.9) / 68.9 * 100"


def copies_example(expression: str) -> bool:
    """Whether ``expression`` is :data:`EXAMPLE_EXPRESSION` (spacing aside), not arithmetic of the question."""
    return "".join(expression.split()) == "".join(EXAMPLE_EXPRESSION.split())


class CalcArgs(BaseModel):
    expression: str = Field(..., min_length=1, max_length=MAX_EXPR_CHARS,
                            description=f"arithmetic expression, e.g. {EXAMPLE_EXPRESSION}")


# the signs papers print (and models copy from them) for the ones Python reads
_SIGNS = {"π": "pi", "−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/"}
_PRINTED_SIGNS = str.maketrans(_SIGNS)


def expression_pattern(parts: int) -> str:
    """A regular expression (a JSON-schema ``pattern``) matching what :func:`calculate` reads, made of at most
    ``parts`` pieces: digits, operators, parentheses, commas, the printed signs it reads and its function and
    constant names, no other letter. A model decoding under a grammar from it writes the numbers an equation takes,
    not its symbols (the 1.5B model wrote "sum_{i in C1} s(i, j)" for a sum it was given every term of). At most
    :func:`pattern_chars` characters long."""
    names = "|".join(sorted([*FUNCTIONS, *CONSTANTS], key=len, reverse=True))
    signs = "".join(sign for sign in _SIGNS if not sign.isascii())
    return rf"^([0-9.+*/^(), {signs}-]|{names}){{1,{parts}}}$"


def pattern_chars(parts: int) -> int:
    """The most characters a string of :func:`expression_pattern` with ``parts`` pieces can hold."""
    return parts * max(len(name) for name in [*FUNCTIONS, *CONSTANTS])


def calculate(expression: str) -> float | int:
    expr = expression.translate(_PRINTED_SIGNS).strip()
    if not expr:
        raise CalcError("The expression is empty.")
    if len(expr) > MAX_EXPR_CHARS:
        raise CalcError(f"The expression is too long ({len(expr)} chars, max {MAX_EXPR_CHARS}).")
    try:
        tree = ast.parse(expr.replace("^", "**") if "^" in expr and "**" not in expr else expr, mode="eval")
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise CalcError(f"Not a valid arithmetic expression: {getattr(exc, 'msg', exc)}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise CalcError(f"The expression is too large ({len(nodes)} parts, max {MAX_NODES}).")
    result = _eval(tree.body, 0)
    return _check(result)


def _check(v):
    if isinstance(v, bool):
        raise CalcError("Booleans are not numbers here.")
    if isinstance(v, int):
        if abs(v) > 10**MAX_INT_DIGITS:
            raise CalcError("The result is too large.")
        return v
    if isinstance(v, float):
        if math.isnan(v):
            raise CalcError("The result is not a number (NaN).")
        if math.isinf(v) or abs(v) > MAX_MAGNITUDE:
            raise CalcError("The result is too large.")
        return v
    raise CalcError(f"Unsupported value of type {type(v).__name__}.")


def _eval(node: ast.AST, depth: int):
    if depth > MAX_DEPTH:
        raise CalcError(f"The expression is nested too deeply (max {MAX_DEPTH}).")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise CalcError(f"Only numbers are allowed, not {type(node.value).__name__} {node.value!r}.")
        return _check(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        v = _eval(node.operand, depth + 1)
        return _check(-v if isinstance(node.op, ast.USub) else +v)
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, depth + 1)
        b = _eval(node.right, depth + 1)
        return _binop(node.op, a, b)
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise CalcError(f"Unknown name {node.id!r}: only numbers, {', '.join(CONSTANTS)} and the functions {', '.join(FUNCTIONS)}.")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise CalcError(f"Only these functions are allowed: {', '.join(FUNCTIONS)}.")
        if node.keywords:
            raise CalcError("Keyword arguments are not allowed.")
        if not 1 <= len(node.args) <= 10:
            raise CalcError("A function takes 1 to 10 arguments here.")
        args = [_eval(a, depth + 1) for a in node.args]
        name = node.func.id
        if name == "pow":
            if len(args) != 2:
                raise CalcError("pow(x, y) takes two arguments.")
            return _binop(ast.Pow(), args[0], args[1])
        if name == "round" and len(args) == 2 and (not isinstance(args[1], int) or abs(args[1]) > 15):
            raise CalcError("round(x, n) needs an integer n between -15 and 15.")
        try:
            return _check(FUNCTIONS[name](*args))
        except (ValueError, OverflowError, TypeError) as exc:
            raise CalcError(f"{name}() failed: {exc}") from None
    raise CalcError(f"{type(node).__name__} is not allowed: use numbers, + - * / // % ** and parentheses.")


def _binop(op: ast.operator, a, b):
    try:
        if isinstance(op, ast.Add):
            return _check(a + b)
        if isinstance(op, ast.Sub):
            return _check(a - b)
        if isinstance(op, ast.Mult):
            if isinstance(a, int) and isinstance(b, int) and (_digits(a) + _digits(b) > MAX_INT_DIGITS + 1):
                raise CalcError("The result is too large.")
            return _check(a * b)
        if isinstance(op, ast.Div):
            return _check(a / b)
        if isinstance(op, ast.FloorDiv):
            return _check(a // b)
        if isinstance(op, ast.Mod):
            return _check(a % b)
        if isinstance(op, ast.Pow):
            if abs(b) > MAX_EXPONENT:
                raise CalcError(f"The exponent is too large (max {MAX_EXPONENT}).")
            if isinstance(a, int) and isinstance(b, int) and b >= 0:
                if abs(a) > 1 and b * math.log10(abs(a)) > MAX_INT_DIGITS:
                    raise CalcError("The result is too large.")
                return _check(a**b)
            r = float(a) ** float(b)
            if isinstance(r, complex):
                raise CalcError("The result is a complex number.")
            return _check(r)
    except ZeroDivisionError:
        raise CalcError("Division by zero.") from None
    except OverflowError:
        raise CalcError("The result is too large.") from None
    raise CalcError(f"Operator {type(op).__name__} is not allowed.")


def _digits(n: int) -> int:
    return max(1, int(math.log10(abs(n)) + 1)) if n else 1


def format_result(value: float | int) -> str:
    """12 significant digits for floats (hides 0.1 + 0.2 = 0.30000000000000004 noise), ints exact."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.12g}"
    return str(value)


def calc_observation(expression: str) -> str:
    try:
        return f"The calculated result is: {format_result(calculate(expression))}"
    except CalcError as exc:
        return f"[Error]: {exc}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m evidex.tools.calc EXPRESSION", file=sys.stderr)
        return 2
    try:
        print(format_result(calculate(" ".join(args))))
    except CalcError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
