"""Document bytes -> text: UTF-8 with one leading BOM removed, or a clear error."""

from __future__ import annotations

_BOM = "\ufeff"


class DocumentDecodeError(ValueError):
    """The document is not valid UTF-8; `byte_offset` is where the bad bytes start."""

    def __init__(self, byte_offset: int, bad_bytes: bytes, reason: str) -> None:
        self.byte_offset = byte_offset
        self.bad_bytes = bad_bytes
        shown = " ".join(f"0x{byte:02x}" for byte in bad_bytes)
        super().__init__(f"invalid UTF-8 at byte offset {byte_offset}: {shown} ({reason})")


def decode_document(data: bytes) -> str:
    """Decode `data` as strict UTF-8 and drop one leading byte order mark.

    All offsets of the index refer to the returned text, so the BOM is removed
    here, once, and nowhere else.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentDecodeError(exc.start, data[exc.start : exc.end], exc.reason) from None
    return text.removeprefix(_BOM)
