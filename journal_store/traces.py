"""A run's trace as this deployment exports it: the settings' project and content choices."""

from __future__ import annotations

from django.conf import settings

from runtime.otel import TraceOptions


def options() -> TraceOptions:
    """The trace options the settings (MINUTES_OTLP_*) chose."""
    return TraceOptions(
        project=settings.OTLP_PROJECT,
        content=settings.OTLP_CONTENT,
        content_chars=settings.OTLP_CONTENT_CHARS,
    )
