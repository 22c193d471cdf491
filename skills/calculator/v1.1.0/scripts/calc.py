"""calculator 1.1.0: adds powers (**), but now prints every division as a float.

The change is deliberate for the demo: 2 ** 10 starts passing (an improvement)
and (15 * 4) / 3 + 7 now prints 27.0 (a regression against 1.0.0).
"""

import ast
import operator
import sys

OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def evaluate(node):
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        if isinstance(node.op, ast.Pow) and abs(evaluate(node.right)) > 1000:
            raise ValueError("exponent too large")
        return OPS[type(node.op)](evaluate(node.left), evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -evaluate(node.operand)
    raise ValueError("unsupported expression")


def main():
    text = sys.stdin.read().strip()
    expression = text.split("Calculate", 1)[-1].strip()
    try:
        value = evaluate(ast.parse(expression, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError) as exc:
        print(f"error: {exc}")
        return
    print(value if isinstance(value, float) else int(value))


main()
