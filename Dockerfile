# The image for the scale-out setup in docker-compose.yml: web (gunicorn), worker and beat.
FROM python:3.11-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --create-home minutes
WORKDIR /app
COPY pyproject.toml README.md ./
COPY runtime runtime
COPY teams teams
COPY config config
COPY journal_store journal_store
COPY services services
COPY tasks tasks
COPY dashboard dashboard
COPY desk desk
COPY templates templates
COPY static static
COPY manage.py gunicorn.conf.py ./
RUN pip install --no-cache-dir '.[postgres,serve]'
ENV MINUTES_HOME=/data MINUTES_DEBUG=0 PYTHONUNBUFFERED=1
RUN mkdir -p /data && chown minutes /data
USER minutes
EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3"]
