"""Celery tasks. Their modules moved whole to services/ (with the tasks still inside them,
registered under their old names); the next commit brings the tasks alone back here."""
