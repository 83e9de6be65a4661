"""The support desk's shared state on the database: an orders table with a version column,
and the services (refunds, status changes by compare-and-swap) its team uses. A Django app;
it may import runtime and journal_store.
"""
