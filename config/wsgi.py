import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# A web server without CELERY_BROKER_URL says in its log where its runs go (config/celery.py).
from config.celery import warn_a_web_server_on_the_embedded_broker  # noqa: E402

warn_a_web_server_on_the_embedded_broker()
