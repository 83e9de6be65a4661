"""The search index keeps only events of a run: a document of a shared stream's event (a desk
order's fact, a customer's intent: run id '') was a hit with no run to link to, and broke the
search page for its words."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0014_loop_snapshot"),
    ]

    operations = [
        migrations.RunSQL("DELETE FROM search_event WHERE run_id = ''", migrations.RunSQL.noop)
    ]
