"""The versioned event store in the database, its projections, and journal import/export.

A Django app. journal.py is the Journal protocol on the database (append with expected
version, fencing, ordered positions); models.py the stored events and the read models;
projection.py the projectors that keep the read models; transfer.py and admission.py JSONL
export and the checks an imported journal must pass. It may import runtime; it never imports
tasks or dashboard.
"""
