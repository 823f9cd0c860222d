"""decode_document: strict UTF-8, one leading BOM removed, errors with the byte offset."""

from __future__ import annotations

import pytest
from mdchunks.heading_index import DocumentDecodeError, decode_document


def test_plain_utf8() -> None:
    assert decode_document("# Café 🦀\n".encode()) == "# Café 🦀\n"


def test_one_leading_bom_is_removed() -> None:
    assert decode_document(b"\xef\xbb\xbf# T\n") == "# T\n"


def test_only_one_bom_is_removed() -> None:
    assert decode_document(b"\xef\xbb\xbf\xef\xbb\xbfx") == "\ufeffx"


def test_a_bom_elsewhere_is_content() -> None:
    assert decode_document(b"x\xef\xbb\xbf") == "x\ufeff"


def test_empty() -> None:
    assert decode_document(b"") == ""
    assert decode_document(b"\xef\xbb\xbf") == ""


@pytest.mark.parametrize(
    ("data", "offset", "shown"),
    [
        (b"ab\xffcd", 2, "0xff"),
        (b"\xef\xbb\xbfok\xc3", 5, "0xc3"),  # offsets count the BOM: they are file offsets
        ("é".encode() + b"\xe2\x82", 2, "0xe2 0x82"),
        (b"\xed\xa0\x80", 0, "0xed"),  # an encoded surrogate is not UTF-8
    ],
)
def test_invalid_utf8_names_the_byte_offset(data: bytes, offset: int, shown: str) -> None:
    with pytest.raises(DocumentDecodeError) as caught:
        decode_document(data)
    assert caught.value.byte_offset == offset
    assert f"byte offset {offset}" in str(caught.value)
    assert shown in str(caught.value)


def test_decode_error_is_a_value_error() -> None:
    assert issubclass(DocumentDecodeError, ValueError)
