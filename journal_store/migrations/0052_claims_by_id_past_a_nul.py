"""The claims' id index (0045) on PostgreSQL, built again on an expression that a NUL
character in a claim cannot fail: `(data::jsonb) ->> 'claim_id'` cast the whole payload of
every ClaimAsserted appended, and jsonb refuses the escape of U+0000 ("unsupported Unicode
escape sequence"), so a claim whose value or evidence held one (an agent's output, a binary
file's bytes) failed to append at all. The escape is replaced before the cast by another of
the same six characters, `\\u0020`: JSON text either way, whether the backslash began an
escape or ended an escaped backslash (`\\\\u0000`, the text "\\u0000"). The claim id itself is
the runtime's hash, and one holding NUL is refused where claims are appended and imported.

The new index is built beside the old one first, then the old one dropped, both without
stopping writers (journal_store/index_build.py), so the claims' reads are never without one.
SQLite's index (json_extract, which takes the escape) stays as it was."""

from django.db import migrations

from journal_store.index_build import BuildIndexFromSQL, DropIndexFromSQL

NAME = "journal_claims_by_id_text"
OLD = "journal_claims_by_id"
# E'' strings: a backslash is the escape's whatever standard_conforming_strings says.
CLAIM_ID = "(replace(data, E'\\\\u0000', E'\\\\u0020')::jsonb ->> 'claim_id')"
OLD_CLAIM_ID = "((data::jsonb) ->> 'claim_id')"


def claims(expression: str) -> str:
    return f"(stream, {expression}) WHERE kind = 'ClaimAsserted'"


class Migration(migrations.Migration):
    # Concurrent builds and drops cannot run in a transaction (index_build.py).
    atomic = False

    dependencies = [
        ("journal_store", "0051_beat_round"),
    ]

    operations = [
        BuildIndexFromSQL(NAME, "journal_event", {"postgresql": claims(CLAIM_ID)}),
        DropIndexFromSQL(OLD, "journal_event", {"postgresql": claims(OLD_CLAIM_ID)}),
    ]
