"""invoice-extractor 1.1.0: the regular-expression extractor, with two changes.

* New: an invoice without a currency code gets the account's default currency
  (USD) instead of no ``currency`` field (fixes the case ``no-currency``).
* Changed: amounts are parsed the European way when they contain a comma
  ("1.250,00" -> 1250.0). That also reads "1,250.00" as 1.25: the case
  ``thousands-separator`` regresses. The demo keeps this on purpose.
"""

import json
import re
import sys

DEFAULT_CURRENCY = "USD"


def parse_amount(text: str) -> float:
    if "," in text:  # European style: "." groups thousands, "," is the decimal mark
        text = text.replace(".", "").replace(",", ".")
    return float(text)


text = sys.stdin.read()
number = re.search(r"(?:Invoice|Rechnung)\s*#?(\d+)", text)
vendor = re.search(r"(?:from|von|-)\s+([A-Z][\w&.]*(?:\s+[A-Z][\w&.]*)*)", text)
total = re.search(r"(?:total|amount due|Summe)\s+([\d.,]*\d)", text, re.IGNORECASE)
currency = re.search(r"\b([A-Z]{3})\b\s*$", text.strip())
record = {
    "number": int(number.group(1)) if number else None,
    "vendor": vendor.group(1) if vendor else None,
    "total": parse_amount(total.group(1)) if total else None,
    "currency": currency.group(1) if currency else DEFAULT_CURRENCY,
}
print(json.dumps(record))
