#!/usr/bin/env python3
"""Fails on an SDK client call in runtime/src outside the request layer (`runtime/src/send/`),
or on a request's span or paginator made outside it.

A client call is one of the DynamoDB or Streams operations named below called on a client
(`client.get_item()`, `db.client().query()`, across lines as rustfmt writes chains), or an
input sent with `.send_with(client)`. The `Db`'s clients without and with the SDK's retries
are private to `send/` (the compiler holds that); this check holds the public `Db::client()`
and every other client to the same rule. The layer also owns each request's span (with its
attempts and capacity): `trace::span(..)`, `trace::table_span(..)`, `Db::traced(..)` and the
SDK's `.into_paginator()` are called only there. The exceptions are named with their reason.

Usage: client_calls.py RUNTIME_SRC   (exits 1 and prints each call outside the layer)
"""
import os
import re
import sys

OPERATIONS = """
    batch_execute_statement batch_get_item batch_write_item create_backup create_global_table
    create_table delete_backup delete_item delete_resource_policy delete_table describe_backup
    describe_continuous_backups describe_endpoints describe_limits describe_stream
    describe_table describe_time_to_live execute_statement execute_transaction export_table_to_point_in_time
    get_item get_records get_resource_policy get_shard_iterator import_table list_backups
    list_streams list_tables list_tags_of_resource put_item put_resource_policy query
    restore_table_from_backup scan tag_resource transact_get_items transact_write_items
    untag_resource update_continuous_backups update_item update_table update_time_to_live
    wait_until_table_exists wait_until_table_not_exists
""".split()

CALL = re.compile(
    r"\bclient(?:\(\))?\s*\.\s*(" + "|".join(OPERATIONS) + r")\(\)"
    r"|\.send_with\(\s*&?\s*(?:self\.)?(?:db\.)?client"
    r"|\btrace::(?:span|table_span)\(|\.\s*traced\(|\.\s*into_paginator\(\)"
)

# Files that may call the client directly, and why.
EXCEPTIONS = {
    "local": "the local engine's own set-up: starting the engine and waiting for it",
    "testing.rs": "the test harness deletes each test's table with a client of its own",
}


def main(root):
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            if relative.startswith("send" + os.sep):
                continue
            if any(relative == key or relative.startswith(key + os.sep) for key in EXCEPTIONS):
                continue
            with open(path) as source:
                text = re.split(r"#\[cfg\(test\)\]\s*mod tests", source.read())[0]
            code = "\n".join(line.split("//")[0] for line in text.split("\n"))
            for call in CALL.finditer(code):
                number = code.count("\n", 0, call.start()) + 1
                found.append(f"{path}:{number}: {' '.join(call.group(0).split())}")
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} SDK client call(s), span(s) or paginator(s) outside {root}/send/: "
            "build and send requests there"
        )
        return 1
    print(f"{root}: every SDK client call is in send/ (exceptions: {', '.join(EXCEPTIONS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
