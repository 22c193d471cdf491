"""Company policy rules for screening answers (a seed 001 `code_judge`).

stdin : {"input", "output", "expected", "criteria", "trace", "metadata", "config", "test_id"}
stdout: last line {"score", "passed", "reasoning", "details"}; score = share of rules kept.
"""

import json
import sys

payload = json.load(sys.stdin)
try:
    answer = json.loads(payload["output"])
except ValueError:
    print(json.dumps({"score": 0, "passed": False, "reasoning": "output is not JSON"}))
    sys.exit(0)

rules = {
    "policy version is current": answer.get("policy_version") == payload["config"].get("policy_version"),
    "a denial names the list": answer.get("decision") != "DENIED" or bool(answer.get("matched_list")),
    "an approval is low risk": answer.get("decision") != "APPROVED" or answer.get("risk_level") == "low",
    "reasons are given": bool(answer.get("reasons")),
}
broken = [name for name, kept in rules.items() if not kept]
score = (len(rules) - len(broken)) / len(rules)
print(json.dumps({
    "score": score,
    "passed": not broken,
    "reasoning": "all policy rules kept" if not broken else "broken: " + "; ".join(broken),
    "details": {"rules": rules},
}))
