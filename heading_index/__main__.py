"""`python -m mdchunks.heading_index FILE...`: one JSON object per heading, one per line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mdchunks.heading_index.decode import DocumentDecodeError, decode_document
from mdchunks.heading_index.index import build_index


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m mdchunks.heading_index FILE...", file=sys.stderr)
        return 2
    status = 0
    for name in argv:
        try:
            text = decode_document(Path(name).read_bytes())
        except (OSError, DocumentDecodeError) as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            status = 1
            continue
        for heading in build_index(text).headings:
            record = {
                "file": name,
                "level": heading.level,
                "text": heading.text,
                "start": heading.start,
                "end": heading.end,
                "section_end": heading.section_end,
                "path": list(heading.path),
            }
            print(json.dumps(record, ensure_ascii=False))
    return status


def run(argv: list[str]) -> int:
    """`main`, quiet when the reader stops reading (`... | head`)."""
    try:
        status = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's own recipe: point stdout at /dev/null so that the flush at
        # exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as `git log | head` leaves
    return status


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
