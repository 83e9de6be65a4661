"""gunicorn's settings for Minutes: gunicorn reads this file from the folder it is started in
(a clone's root; /app in the image). Its command line and GUNICORN_CMD_ARGS win over it.

Only the worker timeout is set. gunicorn kills a worker whose request has run that long, and
its default, 30 s, is shorter than the time Minutes waits on a database before it gives up
(a minute for a PostgreSQL connection gone silent, config/env.py SILENCE_BOUND; 30 s for a
SQLite database another writer holds): a page waiting on a database that had gone away was cut
first, with no answer (a proxy in front says 502) and the worker started again, where it
answers 503 saying that the database did not answer and to try again. So the timeout is the
database's longest wait, as DATABASE_URL leaves it, and a margin for the answer.
"""

from config import env

MARGIN = 15  # seconds for the answer once the database has been given up on
DEFAULT = 30  # gunicorn's own, where nothing bounds the wait (the URL turned it off)

wait = env.longest_wait(env.text("DATABASE_URL", env.DATABASE_URL))
timeout = wait + MARGIN if wait else DEFAULT
