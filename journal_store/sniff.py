"""What a file that is no journal is, from its first line: said once for the file, where every
line of it would have been a problem of its own (journal_store/transfer.py asks)."""

from __future__ import annotations

import codecs


def not_a_journal(first: bytes) -> str | None:
    """What a file whose first line shows it is no UTF-8 text is, and what to do: said once
    for the file, where every line was "not UTF-8 text" and the last was offered as a torn
    one. UTF-16 and UTF-32 by their byte order mark (PowerShell's `>` writes UTF-16);
    compressed, an archive, an image, a document or a database by its first bytes; or bytes
    no JSON text holds (a NUL)."""
    for encoding, marks in (
        ("UTF-32", (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)),
        ("UTF-16", (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)),
    ):
        if first.startswith(marks):
            return (
                f"the file is {encoding} text (it begins with a {encoding} byte order mark); "
                f"a journal is UTF-8: save it as UTF-8 (iconv -f {encoding} -t UTF-8)"
            )
    what = next((said for magic, said in MAGIC if first.startswith(magic)), None)
    if what is None and b"\x00" in first:
        what = "binary (it holds NUL bytes), not JSON lines"
    if what is None:
        return None
    return f"the file is {what}; a journal is UTF-8 JSON lines"


# Files people pick by mistake, by their first bytes (a PNG's first line holds no NUL, and a
# PDF's is ASCII: each was refused as twenty lines of "not UTF-8 text" and "... and 172 more").
MAGIC = (
    (b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip)"),
    (b"PK\x03\x04", "a zip archive: take the journal out of it first (unzip)"),
    (b"BZh", "bzip2-compressed: decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first (unzstd)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (
        b"SQLite format 3\x00",
        "an SQLite database (a run's journal comes out of one with export_journal)",
    ),
)
