#!/usr/bin/env python3
"""Fails on a resend loop outside `RetryPolicy::drive` (runtime/src/retry.rs).

Every request the library sends again goes through that one loop, asked after each attempt
(single writes, transactions, unprocessed batch parts, reads, table changes, long jobs). A
loop of its own would need the policy's backoff to wait between attempts, so this check fails
on a call of the backoff (`sleep_before(..)`, `.delay(..)` or `.ceiling(..)` on a policy)
anywhere but retry.rs. The SDK's own retries, for requests it may send again as they are, are
set to the same policy when the `Db` makes its client (`RetryPolicy::sdk_config`).

A transaction's window (`RESEND_WINDOW`) reads a ceiling to decide whether one more attempt
could still start inside it: named below as an exception, since it sends nothing itself.

Usage: resend_loops.py SRC...   (exits 1 and prints each call outside retry.rs)
"""
import os
import re
import sys

BACKOFF = re.compile(r"\.\s*(sleep_before|delay|ceiling)\(")

# Files that may read the backoff, and why.
EXCEPTIONS = {
    os.path.join("runtime", "src", "send", "write", "transaction.rs"):
        "a transaction's judge reads the next delay's ceiling against its resend window",
}


def main(roots):
    found = []
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in names:
                path = os.path.join(directory, name)
                if not name.endswith(".rs") or path.endswith(os.path.join("src", "retry.rs")):
                    continue
                if os.path.normpath(path) in EXCEPTIONS:
                    continue
                with open(path, encoding="utf-8") as source:
                    text = source.read()
                # Unit tests may time the backoff itself.
                text = text.split("#[cfg(test)]")[0]
                for match in BACKOFF.finditer(text):
                    line = text.count("\n", 0, match.start()) + 1
                    found.append(f"{path}:{line}: a policy's backoff outside RetryPolicy::drive")
    for entry in found:
        print(entry)
    if found:
        print("one resend loop: send again through RetryPolicy::drive (runtime/src/retry.rs)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["runtime/src"]))
