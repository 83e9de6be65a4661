"""The dashboard's function views, by subject: runs, review queues, transfer.

They read through dashboard/queries.py and act through dashboard/actions.py (or the services
in services/), and only choose templates; they import nothing from dashboard/api.
"""
