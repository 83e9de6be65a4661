"""The support desk's shared state on the database: an orders table with a version column,
the services (refunds, status changes by compare-and-swap) its team uses on the workers, and
the commit target a reviewer's decision on an order conflict writes through (`conflicts.py`,
registered with services.review in DeskConfig.ready()).

A Django app; it may import runtime, teams.desk, journal_store and services.review (for the
registry); never tasks or dashboard.
"""
