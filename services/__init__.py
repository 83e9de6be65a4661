"""Application services: what the pages, the API, the commands and the workers ask of Minutes.

Moved here whole from tasks/ (which they outgrew); the next commit takes the Celery tasks out
of them again, into tasks/.
"""
