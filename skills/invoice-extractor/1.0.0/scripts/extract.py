"""invoice-extractor 1.0.0: a regular-expression extractor (the skill's offline implementation)."""

import json
import re
import sys

text = sys.stdin.read()
number = re.search(r"(?:Invoice|Rechnung)\s*#?(\d+)", text)
vendor = re.search(r"(?:from|von|-)\s+([A-Z][\w&.]*(?:\s+[A-Z][\w&.]*)*)", text)
total = re.search(r"(?:total|amount due|Summe)\s+([\d,]+(?:\.\d+)?)", text, re.IGNORECASE)
currency = re.search(r"\b([A-Z]{3})\b\s*$", text.strip())
record = {
    "number": int(number.group(1)) if number else None,
    "vendor": vendor.group(1) if vendor else None,
    "total": float(total.group(1).replace(",", "")) if total else None,
}
if currency:
    record["currency"] = currency.group(1)
print(json.dumps(record))
