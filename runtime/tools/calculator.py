"""Safe arithmetic for the chat calculator: the expression is parsed, never evaluated by Python.

Only numbers, + - * / // % ** and parentheses are allowed. Names, attributes, calls, subscripts and
everything else are refused, and sizes are checked BEFORE each operation so ``9**9**9`` or a chain
of multiplications cannot eat the machine.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

MAX_EXPRESSION_CHARS = 200
MAX_DEPTH = 40
MAX_EXPONENT = 1000
MAX_RESULT_BITS = 4096  # ~1,200 decimal digits
MAX_FLOAT = 1e300

# Spellings people type that Python does not: ^ for power, × and ÷, full-width brackets.
_NORMALISE = str.maketrans({"×": "*", "÷": "/", "（": "(", "）": ")"})

Number = int | float


class CalculatorError(ValueError):
    """The expression is not allowed or cannot be computed; ``str(error)`` is safe to show."""


def normalise(expression: str) -> str:
    # ``^`` means power to people; Python would read it as xor.
    text = expression.replace("^", "**").translate(_NORMALISE)
    return text.strip().rstrip("=?").strip()


def _check_int_size(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_RESULT_BITS:
        raise CalculatorError("the result is too large")
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value) or abs(value) > MAX_FLOAT):
        raise CalculatorError("the result is too large")
    return value


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculatorError(f"exponents above {MAX_EXPONENT} are not allowed")
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        # Estimate the size before computing: bits(base) * exponent bounds the result.
        if base.bit_length() * exponent > MAX_RESULT_BITS:
            raise CalculatorError("the result is too large")
    if base == 0 and exponent < 0:
        raise CalculatorError("division by zero")
    try:
        result = base**exponent
    except OverflowError:
        raise CalculatorError("the result is too large") from None
    if isinstance(result, complex):
        raise CalculatorError("the result is not a real number")
    return result


def _multiply(left: Number, right: Number) -> Number:
    if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_RESULT_BITS:
        raise CalculatorError("the result is too large")
    return left * right


def _divide(op: Callable[[Number, Number], Number]) -> Callable[[Number, Number], Number]:
    def checked(left: Number, right: Number) -> Number:
        if right == 0:
            raise CalculatorError("division by zero")
        return op(left, right)

    return checked


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _multiply,
    ast.Div: _divide(operator.truediv),
    ast.FloorDiv: _divide(operator.floordiv),
    ast.Mod: _divide(operator.mod),
    ast.Pow: _power,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _describe(node: ast.AST) -> str:
    kinds = {
        ast.Name: "names",
        ast.Attribute: "attributes",
        ast.Call: "function calls",
        ast.Subscript: "subscripts",
        ast.Lambda: "lambdas",
        ast.Compare: "comparisons",
        ast.BoolOp: "boolean logic",
    }
    for kind, label in kinds.items():
        if isinstance(node, kind):
            return label
    return type(node).__name__


def _evaluate(node: ast.AST, depth: int) -> Number:
    if depth > MAX_DEPTH:
        raise CalculatorError("the expression is nested too deeply")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise CalculatorError("only numbers are allowed")
        return _check_int_size(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, depth + 1)
        right = _evaluate(node.right, depth + 1)
        try:
            return _check_int_size(_BINARY[type(node.op)](left, right))
        except OverflowError:
            raise CalculatorError("the result is too large") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, depth + 1))
    raise CalculatorError(f"{_describe(node)} are not allowed; use numbers, + - * / // % ** and parentheses")


def evaluate(expression: str) -> Number:
    """The value of an arithmetic expression, or ``CalculatorError`` with a safe reason."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculatorError("the expression is empty")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    text = normalise(expression)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise CalculatorError("the expression is not valid arithmetic") from None
    return _evaluate(tree.body, 0)


def format_number(value: Number) -> str:
    """126 stays 126; 2.0 becomes 2; other floats keep up to 12 significant digits."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.12g}"
    return str(value)


def calculate(expression: str) -> str:
    return format_number(evaluate(expression))
