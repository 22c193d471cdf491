"""Grade generated Python in an E2B sandbox with outbound internet disabled."""

import re
import time

from e2b_code_interpreter import Sandbox
from metrics import write_metrics

FENCE_RE = re.compile(r"```(?:\s*python)?\s*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)

# This illustrative precheck is not a security boundary. Generated code executes
# in an E2B sandbox, never in the local Python process.
UNSAFE_PATTERNS = [
    r"\bimport\s+socket\b",
    r"\bimport\s+requests\b",
    r"\bimport\s+urllib\b",
    r"\bos\.system\b",
    r"\bsubprocess\b",
    r"\beval\s*\(",
    r"\bexec\s*\(",
    r"open\(\s*['\"]\/etc",
    r"open\(\s*['\"]\/proc",
    r"__import__\(",
]
SANDBOX_TIMEOUT_SECONDS = 60
EXECUTION_TIMEOUT_SECONDS = 5


def is_unsafe(code: str) -> bool:
    return any(re.search(pattern, code) for pattern in UNSAFE_PATTERNS)


def _extract_function(output: str, fn_name: str) -> str | None:
    fenced = FENCE_RE.search(output)
    code = fenced.group(1).strip() if fenced else output.strip()
    if re.search(rf"\bdef\s+{re.escape(fn_name)}\s*\(", code):
        return code
    return None


def get_assert(output, context):
    task_id = context.get("id", str(time.time()))
    provider = context.get("provider", "unknown")
    model = context.get("model", "unknown")
    variables = context["vars"]
    started = time.monotonic()

    def result(passed, reason):
        write_metrics(
            task_id,
            provider,
            model,
            passed,
            time.monotonic() - started,
            extra={"reason": reason},
        )
        return {"pass": passed, "score": int(passed), "reason": reason}

    function_name = variables["function_name"]
    code = _extract_function(output, function_name)
    if not code:
        return result(False, f"No Python function named {function_name} found")
    if is_unsafe(code):
        return result(False, "Unsafe pattern detected in generated code")

    program = f"{code}\n\nprint({function_name}({variables['test_input']}))\n"
    try:
        # E2B's SDK accepts internet policy when creating the sandbox, and an
        # execution timeout on run_code. CPU/memory limits are template settings,
        # not run_code parameters. Never retry with weaker settings on failure.
        with Sandbox.create(
            allow_internet_access=False, timeout=SANDBOX_TIMEOUT_SECONDS
        ) as sandbox:
            execution = sandbox.run_code(
                program, language="python", timeout=EXECUTION_TIMEOUT_SECONDS
            )
    except Exception as error:
        return result(False, f"Sandbox execution error: {error}")

    expected_error = variables.get("expected_error")
    if execution.error:
        error = execution.error
        if expected_error and error.name == expected_error:
            return result(True, f"Expected error: {error.name}")
        return result(False, f"Execution error: {error.name}: {error.value}")
    if expected_error:
        return result(False, f"Expected {expected_error}, but execution succeeded")

    stdout = "".join(execution.logs.stdout).strip()
    expected = str(variables["expected_output"])
    if stdout == expected:
        return result(True, f"Correct output: {stdout}")
    return result(False, f"Expected {expected}, got {stdout or '(empty)'}")
