"""Milvus-style boolean filter expressions for search (neusym.md §1.5), parsed by a recursive-descent parser.

    table_name == 'chunks' and page_number in [1, 2]
    bbox[0] + bbox[2] <= 300 and not (pdf_id == 'abc')
    array_length(bbox) == 4 and array_contains(bbox, 100)

Grammar (lowest precedence first)::

    expr     := and ( ("or" | "||") and )*
    and      := not ( ("and" | "&&") not )*
    not      := ("not" | "!") not | cmp
    cmp      := sum [ ("=="|"!="|"<"|"<="|">"|">=") sum | ["not"] "in" list | "like" STRING ]
    sum      := prod ( ("+"|"-") prod )*
    prod     := pow ( ("*"|"/"|"%") pow )*
    pow      := unary [ "**" pow ]
    unary    := ("-"|"+") unary | postfix
    postfix  := atom ( "[" INT "]" )*
    atom     := NUMBER | STRING | true | false | FIELD | FUNC "(" args ")" | "(" expr ")" | list
    list     := "[" [ expr ("," expr)* ] "]"

Fields: pdf_id, table_name, column_name, primary_key (strings), page_number (int), bbox (int[4], may be
absent). Functions: array_contains, array_contains_all, array_contains_any, array_length.
Every syntax, name or type problem raises ``FilterSyntaxError`` with the character position. Evaluation never
raises: a missing box or a division by zero makes the comparison false. Nothing is ever ``eval``-ed.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

MAX_FILTER_CHARS = 2000
MAX_DEPTH = 40
MAX_LIST_ITEMS = 1000
MAX_EXPONENT = 64

FIELDS: dict[str, str] = {
    "pdf_id": "str",
    "table_name": "str",
    "column_name": "str",
    "primary_key": "str",
    "page_number": "num",
    "bbox": "array",
}
FIELD_HINTS = {
    "paper_id": "use pdf_id (the paper UUID)",
    "ref_paper_id": "use pdf_id (the paper UUID)",
    "page_id": "use the integer page_number",
    "ref_page_id": "use the integer page_number",
    "table": "use table_name",
    "column": "use column_name",
    "bounding_box": "use bbox",
    "page": "use page_number",
}
FUNCTIONS = {"array_contains": 2, "array_contains_all": 2, "array_contains_any": 2, "array_length": 1}
KEYWORDS = {"and", "or", "not", "in", "like", "true", "false"}


class FilterSyntaxError(ValueError):
    """A filter string that cannot be parsed or type-checked; ``position`` is the 0-based character offset."""

    def __init__(self, message: str, position: int, text: str = ""):
        self.position = position
        self.text = text
        pointer = ""
        if text and len(text) <= 200:
            pointer = f"\n  {text}\n  {' ' * position}^"
        super().__init__(f"Filter error at position {position}: {message}{pointer}")


# ------------------------------------------------------------------------------------------------ lexer


@dataclass(frozen=True)
class Token:
    kind: str  # num | str | ident | kw | op | eof
    value: Any
    pos: int


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|==|!=|<=|>=|&&|\|\||[-+*/%<>()\[\],!])
    """,
    re.VERBOSE,
)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch == "=":
                raise FilterSyntaxError("use '==' (two equal signs) to compare", pos, text)
            if ch in "'\"":
                raise FilterSyntaxError("unterminated string", pos, text)
            raise FilterSyntaxError(f"unexpected character {ch!r}", pos, text)
        kind = m.lastgroup
        raw = m.group()
        if kind == "num":
            if len(raw) > 40:
                raise FilterSyntaxError("number literal too long", pos, text)
            value: Any = float(raw) if any(c in raw for c in ".eE") else int(raw)
            if isinstance(value, float) and not math.isfinite(value):
                raise FilterSyntaxError("number out of range", pos, text)
            tokens.append(Token("num", value, pos))
        elif kind == "str":
            tokens.append(Token("str", _unescape(raw[1:-1]), pos))
        elif kind == "ident":
            low = raw.lower()
            tokens.append(Token("kw", low, pos) if low in KEYWORDS else Token("ident", raw, pos))
        elif kind == "op":
            tokens.append(Token("op", raw, pos))
        pos = m.end()
    tokens.append(Token("eof", None, len(text)))
    return tokens


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


# ------------------------------------------------------------------------------------------------ AST


@dataclass(frozen=True)
class Node:
    pos: int


@dataclass(frozen=True)
class Lit(Node):
    value: Any  # int | float | str | bool


@dataclass(frozen=True)
class ListLit(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class FieldRef(Node):
    name: str


@dataclass(frozen=True)
class Index(Node):
    base: Node
    index: int


@dataclass(frozen=True)
class Unary(Node):
    op: str  # "-" | "+"
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str  # + - * / % **
    left: Node
    right: Node


@dataclass(frozen=True)
class Compare(Node):
    op: str  # == != < <= > >=
    left: Node
    right: Node


@dataclass(frozen=True)
class In(Node):
    value: Node
    items: ListLit
    negated: bool


@dataclass(frozen=True)
class Like(Node):
    value: Node
    pattern: str


@dataclass(frozen=True)
class Logical(Node):
    op: str  # and | or
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True)
class Call(Node):
    name: str
    args: tuple[Node, ...]


# ------------------------------------------------------------------------------------------------ parser


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, pos: int | None = None) -> FilterSyntaxError:
        return FilterSyntaxError(message, self.tok.pos if pos is None else pos, self.text)

    def take(self) -> Token:
        t = self.tokens[self.i]
        self.i += 1
        return t

    def at(self, kind: str, *values) -> bool:
        t = self.tok
        return t.kind == kind and (not values or t.value in values)

    def expect_op(self, value: str) -> Token:
        if not self.at("op", value):
            raise self.error(f"expected {value!r}, found {self._describe()}")
        return self.take()

    def _describe(self) -> str:
        t = self.tok
        if t.kind == "eof":
            return "end of filter"
        return repr(t.value) if t.kind != "str" else "a string"

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"filter is nested too deeply (max {MAX_DEPTH} levels)")

    def leave(self) -> None:
        self.depth -= 1

    # grammar ---------------------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.expr()
        if self.tok.kind != "eof":
            raise self.error(f"unexpected {self._describe()} after a complete expression")
        return node

    def expr(self) -> Node:
        self.enter()
        try:
            items = [self.and_()]
            pos = items[0].pos
            while self.at("kw", "or") or self.at("op", "||"):
                self.take()
                items.append(self.and_())
            return items[0] if len(items) == 1 else Logical(pos, "or", tuple(items))
        finally:
            self.leave()

    def and_(self) -> Node:
        items = [self.not_()]
        pos = items[0].pos
        while self.at("kw", "and") or self.at("op", "&&"):
            self.take()
            items.append(self.not_())
        return items[0] if len(items) == 1 else Logical(pos, "and", tuple(items))

    def not_(self) -> Node:
        if self.at("kw", "not") or self.at("op", "!"):
            t = self.take()
            self.enter()
            try:
                return Not(t.pos, self.not_())
            finally:
                self.leave()
        return self.cmp()

    def cmp(self) -> Node:
        left = self.sum_()
        t = self.tok
        if t.kind == "op" and t.value in ("==", "!=", "<", "<=", ">", ">="):
            self.take()
            right = self.sum_()
            if self.tok.kind == "op" and self.tok.value in ("==", "!=", "<", "<=", ">", ">="):
                raise self.error("chained comparisons are not supported; combine them with 'and'")
            return Compare(t.pos, t.value, left, right)
        if self.at("kw", "not") and self.tokens[self.i + 1].kind == "kw" and self.tokens[self.i + 1].value == "in":
            self.take()
            self.take()
            return In(t.pos, left, self.list_(), True)
        if self.at("kw", "in"):
            self.take()
            return In(t.pos, left, self.list_(), False)
        if self.at("kw", "like"):
            self.take()
            if self.tok.kind != "str":
                raise self.error("'like' needs a string pattern such as 'abc%'")
            return Like(t.pos, left, self.take().value)
        return left

    def sum_(self) -> Node:
        node = self.prod()
        while self.at("op", "+", "-"):
            t = self.take()
            node = Binary(t.pos, t.value, node, self.prod())
        return node

    def prod(self) -> Node:
        node = self.pow_()
        while self.at("op", "*", "/", "%"):
            t = self.take()
            node = Binary(t.pos, t.value, node, self.pow_())
        return node

    def pow_(self) -> Node:
        base = self.unary()
        if self.at("op", "**"):
            t = self.take()
            self.enter()
            try:
                return Binary(t.pos, "**", base, self.pow_())
            finally:
                self.leave()
        return base

    def unary(self) -> Node:
        if self.at("op", "-", "+"):
            t = self.take()
            self.enter()
            try:
                return Unary(t.pos, t.value, self.unary())
            finally:
                self.leave()
        return self.postfix()

    def postfix(self) -> Node:
        node = self.atom()
        while self.at("op", "["):
            t = self.take()
            if self.tok.kind != "num" or not isinstance(self.tok.value, int):
                raise self.error("an array index must be a non-negative integer, e.g. bbox[0]")
            idx = self.take().value
            self.expect_op("]")
            node = Index(t.pos, node, idx)
        return node

    def atom(self) -> Node:
        t = self.tok
        if t.kind == "num" or t.kind == "str":
            self.take()
            return Lit(t.pos, t.value)
        if t.kind == "kw" and t.value in ("true", "false"):
            self.take()
            return Lit(t.pos, t.value == "true")
        if t.kind == "ident":
            self.take()
            if self.at("op", "("):
                return self.call(t)
            return FieldRef(t.pos, t.value)
        if self.at("op", "("):
            self.take()
            node = self.expr()
            self.expect_op(")")
            return node
        if self.at("op", "["):
            return self.list_()
        if t.kind == "eof":
            raise self.error("the filter ends too early: an operand is missing")
        raise self.error(f"expected a value, field or '(', found {self._describe()}")

    def call(self, name_tok: Token) -> Node:
        name = name_tok.value
        if name.lower() not in FUNCTIONS:
            raise self.error(f"unknown function {name!r} (allowed: {', '.join(FUNCTIONS)})", name_tok.pos)
        self.expect_op("(")
        args: list[Node] = []
        if not self.at("op", ")"):
            args.append(self.expr())
            while self.at("op", ","):
                self.take()
                args.append(self.expr())
        self.expect_op(")")
        want = FUNCTIONS[name.lower()]
        if len(args) != want:
            raise self.error(f"{name}() takes {want} argument(s), got {len(args)}", name_tok.pos)
        return Call(name_tok.pos, name.lower(), tuple(args))

    def list_(self) -> ListLit:
        t = self.expect_op("[")
        items: list[Node] = []
        if not self.at("op", "]"):
            items.append(self.expr())
            while self.at("op", ","):
                self.take()
                items.append(self.expr())
                if len(items) > MAX_LIST_ITEMS:
                    raise self.error(f"list too long (max {MAX_LIST_ITEMS} items)")
        self.expect_op("]")
        return ListLit(t.pos, tuple(items))


# ------------------------------------------------------------------------------------------------ types


def _type(node: Node, text: str) -> str:
    """Static type: num | str | bool | array | list. Raises FilterSyntaxError on misuse."""

    def err(msg: str, n: Node) -> FilterSyntaxError:
        return FilterSyntaxError(msg, n.pos, text)

    if isinstance(node, Lit):
        if isinstance(node.value, bool):
            return "bool"
        return "str" if isinstance(node.value, str) else "num"
    if isinstance(node, FieldRef):
        if node.name not in FIELDS:
            hint = FIELD_HINTS.get(node.name.lower())
            extra = f"; {hint}" if hint else ""
            raise err(f"unknown field {node.name!r} (allowed: {', '.join(FIELDS)}){extra}", node)
        return FIELDS[node.name]
    if isinstance(node, ListLit):
        for item in node.items:
            if _type(item, text) not in ("num", "str", "bool"):
                raise err("list items must be numbers or strings", item)
        return "list"
    if isinstance(node, Index):
        if _type(node.base, text) != "array":
            raise err("only the array field bbox can be indexed", node)
        if node.index > 3:
            raise err("bbox has 4 elements: use an index from 0 to 3", node)
        return "num"
    if isinstance(node, Unary):
        if _type(node.operand, text) != "num":
            raise err(f"unary {node.op!r} needs a number", node)
        return "num"
    if isinstance(node, Binary):
        lt, rt = _type(node.left, text), _type(node.right, text)
        if lt != "num" or rt != "num":
            raise err(f"arithmetic {node.op!r} needs numbers on both sides", node)
        if node.op == "**" and isinstance(node.right, Lit) and abs(node.right.value) > MAX_EXPONENT:
            raise err(f"exponent too large (max {MAX_EXPONENT})", node.right)
        return "num"
    if isinstance(node, Compare):
        lt, rt = _type(node.left, text), _type(node.right, text)
        if "array" in (lt, rt) or "list" in (lt, rt):
            raise err("cannot compare a whole array; index it (bbox[0]) or use array_length/array_contains", node)
        if lt != rt and not {lt, rt} <= {"num", "bool"}:
            raise err(f"cannot compare {lt} with {rt}", node)
        if node.op not in ("==", "!=") and "bool" in (lt, rt):
            raise err(f"{node.op!r} needs numbers or strings", node)
        return "bool"
    if isinstance(node, In):
        vt = _type(node.value, text)
        if vt not in ("num", "str"):
            raise err("'in' needs a number or string on the left", node)
        _type(node.items, text)
        return "bool"
    if isinstance(node, Like):
        if _type(node.value, text) != "str":
            raise err("'like' needs a string field on the left", node)
        return "bool"
    if isinstance(node, Logical):
        for item in node.items:
            if _type(item, text) != "bool":
                raise err(f"'{node.op}' needs conditions on both sides (e.g. page_number == 1)", item)
        return "bool"
    if isinstance(node, Not):
        if _type(node.operand, text) != "bool":
            raise err("'not' needs a condition", node)
        return "bool"
    if isinstance(node, Call):
        first = _type(node.args[0], text)
        if first != "array":
            raise err(f"{node.name}() needs an array field (bbox) as first argument", node.args[0])
        if node.name == "array_length":
            return "num"
        second = _type(node.args[1], text)
        if node.name == "array_contains" and second != "num":
            raise err("array_contains(bbox, value) needs a number value", node.args[1])
        if node.name in ("array_contains_all", "array_contains_any") and second != "list":
            raise err(f"{node.name}(bbox, [..]) needs a list", node.args[1])
        return "bool"
    raise err("unsupported expression", node)  # pragma: no cover


# ------------------------------------------------------------------------------------------------ public


@dataclass(frozen=True)
class Filter:
    text: str
    root: Node

    def matches(self, record: dict) -> bool:
        try:
            return bool(_eval(self.root, record)) is True
        except _Undefined:
            return False

    def chroma_where(self) -> tuple[dict | None, bool]:
        """(where clause for Chroma or None, exact). exact=False means results must be post-filtered."""
        where, exact = _to_where(self.root)
        return where, exact

    def fields(self) -> frozenset[str]:
        """Names of the record fields the filter reads (``bbox`` for any box access)."""
        return frozenset(_fields(self.root))

    def field_values(self, name: str) -> frozenset | None:
        """The values field ``name`` must take for a record to match (from ``==`` / ``in`` conditions joined by
        ``and``/``or``), or None when the filter does not pin it down. A search uses it to narrow the candidates
        (e.g. to one paper's chunks) before evaluating the whole filter on them."""
        return _pinned(self.root, name)


def parse_filter(text: str | None) -> Filter | None:
    """Parse and type-check a filter; ``None``/blank means no filter."""
    if text is None or not str(text).strip():
        return None
    text = str(text)
    if len(text) > MAX_FILTER_CHARS:
        raise FilterSyntaxError(f"filter too long ({len(text)} chars, max {MAX_FILTER_CHARS})", MAX_FILTER_CHARS, "")
    try:
        root = _Parser(text).parse()
    except RecursionError:
        raise FilterSyntaxError(f"filter is nested too deeply (max {MAX_DEPTH} levels)", 0, text) from None
    t = _type(root, text)
    if t != "bool":
        raise FilterSyntaxError("the filter must be a condition (e.g. page_number == 1), not a value", root.pos, text)
    return Filter(text, root)


def _fields(node: Node) -> set[str]:
    if isinstance(node, FieldRef):
        return {node.name}
    out: set[str] = set()
    for value in vars(node).values():
        if isinstance(value, Node):
            out |= _fields(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Node):
                    out |= _fields(item)
    return out


def _pinned(node: Node, name: str) -> frozenset | None:
    if isinstance(node, Compare) and node.op == "==":
        for field_node, lit in ((node.left, node.right), (node.right, node.left)):
            if isinstance(field_node, FieldRef) and field_node.name == name and isinstance(lit, Lit):
                return frozenset([lit.value])
        return None
    if isinstance(node, In) and not node.negated:
        if isinstance(node.value, FieldRef) and node.value.name == name and all(isinstance(i, Lit) for i in node.items.items):
            return frozenset(i.value for i in node.items.items)
        return None
    if isinstance(node, Logical):
        parts = [_pinned(i, name) for i in node.items]
        if node.op == "and":
            known = [p for p in parts if p is not None]
            return frozenset.intersection(*known) if known else None
        if any(p is None for p in parts):
            return None
        return frozenset().union(*parts)
    return None


# ------------------------------------------------------------------------------------------------ evaluation


class _Undefined(Exception):
    """A value is missing (no bbox) or undefined (x / 0): the whole condition is false."""


def _eval(node: Node, rec: dict) -> Any:
    if isinstance(node, Lit):
        return node.value
    if isinstance(node, FieldRef):
        v = rec.get(node.name)
        if v is None:
            raise _Undefined
        return v
    if isinstance(node, ListLit):
        return [_eval(i, rec) for i in node.items]
    if isinstance(node, Index):
        arr = _eval(node.base, rec)
        if node.index >= len(arr):
            raise _Undefined
        return arr[node.index]
    if isinstance(node, Unary):
        v = _eval(node.operand, rec)
        return -v if node.op == "-" else v
    if isinstance(node, Binary):
        a, b = _eval(node.left, rec), _eval(node.right, rec)
        try:
            if node.op == "+":
                return a + b
            if node.op == "-":
                return a - b
            if node.op == "*":
                return a * b
            if node.op == "/":
                return a / b
            if node.op == "%":
                return a % b
            if abs(b) > MAX_EXPONENT:
                raise _Undefined
            r = float(a) ** float(b)
            if isinstance(r, complex) or not math.isfinite(r):
                raise _Undefined
            return r
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            raise _Undefined from None
    if isinstance(node, Compare):
        a, b = _eval(node.left, rec), _eval(node.right, rec)
        try:
            return {
                "==": lambda: a == b,
                "!=": lambda: a != b,
                "<": lambda: a < b,
                "<=": lambda: a <= b,
                ">": lambda: a > b,
                ">=": lambda: a >= b,
            }[node.op]()
        except TypeError:
            raise _Undefined from None
    if isinstance(node, In):
        v = _eval(node.value, rec)
        found = v in _eval(node.items, rec)
        return not found if node.negated else found
    if isinstance(node, Like):
        v = _eval(node.value, rec)
        rx = "^" + "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in node.pattern) + "$"
        return re.match(rx, str(v), re.S) is not None
    if isinstance(node, Logical):
        if node.op == "and":
            return all(_safe_bool(i, rec) for i in node.items)
        return any(_safe_bool(i, rec) for i in node.items)
    if isinstance(node, Not):
        return not _safe_bool(node.operand, rec)
    if isinstance(node, Call):
        arr = _eval(node.args[0], rec)
        if node.name == "array_length":
            return len(arr)
        other = _eval(node.args[1], rec)
        if node.name == "array_contains":
            return other in arr
        if node.name == "array_contains_all":
            return all(x in arr for x in other)
        return any(x in arr for x in other)
    raise _Undefined  # pragma: no cover


def _safe_bool(node: Node, rec: dict) -> bool:
    try:
        return bool(_eval(node, rec))
    except _Undefined:
        return False


# ------------------------------------------------------------------------------------------------ Chroma

_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEG = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_CHROMA_OP = {"==": "$eq", "!=": "$ne", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"}


def _chroma_key(node: Node) -> str | None:
    if isinstance(node, FieldRef) and node.name != "bbox":
        return node.name
    if isinstance(node, Index) and isinstance(node.base, FieldRef) and node.base.name == "bbox":
        return f"bbox_{node.index}"
    return None


def _chroma_value(node: Node):
    if isinstance(node, Lit):
        v = node.value
        if isinstance(v, float) and v.is_integer():
            return int(v)  # int metadata does not match float operands in Chroma
        return v
    if isinstance(node, Unary) and isinstance(node.operand, Lit) and not isinstance(node.operand.value, (str, bool)):
        v = node.operand.value
        v = -v if node.op == "-" else v
        return int(v) if isinstance(v, float) and v.is_integer() else v
    return None


def _to_where(node: Node, negate: bool = False) -> tuple[dict | None, bool]:
    if isinstance(node, Not):
        return _to_where(node.operand, not negate)
    if isinstance(node, Compare):
        key, val, op = _chroma_key(node.left), _chroma_value(node.right), node.op
        if key is None:
            key, val, op = _chroma_key(node.right), _chroma_value(node.left), _FLIP[node.op]
        if key is None or val is None or isinstance(val, bool):
            return None, False
        if negate:
            op = _NEG[op]
            if key.startswith("bbox_"):
                return None, False  # NOT over a possibly missing box is not a plain comparison in Chroma
        if op not in ("==", "!=") and not isinstance(val, (int, float)):
            return None, False  # Chroma orders numbers only
        return {key: {_CHROMA_OP[op]: val}}, True
    if isinstance(node, In):
        key = _chroma_key(node.value)
        vals = [_chroma_value(i) for i in node.items.items]
        if key is None or any(v is None or isinstance(v, bool) for v in vals) or not vals:
            return None, False
        negated = node.negated != negate
        if negated and key.startswith("bbox_"):
            return None, False
        return {key: {"$nin" if negated else "$in": vals}}, True
    if isinstance(node, Logical):
        op = node.op
        if negate:  # De Morgan
            op = "or" if op == "and" else "and"
        parts = [_to_where(i, negate) for i in node.items]
        if op == "and":
            kept = [w for w, _ in parts if w is not None]
            exact = all(w is not None and e for w, e in parts)
            if not kept:
                return None, False
            return (kept[0] if len(kept) == 1 else {"$and": kept}), exact
        if any(w is None for w, _ in parts):
            return None, False  # an untranslatable branch of an OR could match anything
        ws = [w for w, _ in parts]
        return (ws[0] if len(ws) == 1 else {"$or": ws}), all(e for _, e in parts)
    if isinstance(node, Lit) and isinstance(node.value, bool):
        return None, (node.value != negate)  # "true" needs no clause; "false" must be post-filtered
    return None, False
