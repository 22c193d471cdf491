"""calculator 1.0.0: the skill's own implementation, run by the `command` target.

Reads "Calculate <expression>" on stdin and prints the result. Only numbers,
+ - * / and parentheses are understood (parsed with `ast`, never `eval`).
"""

import ast
import operator
import sys

OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(node):
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
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
    print(int(value) if float(value).is_integer() else round(value, 6))


main()
