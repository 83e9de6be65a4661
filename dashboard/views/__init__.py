"""The dashboard's function views, by subject: runs, review queues, transfer."""
