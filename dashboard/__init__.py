"""The web dashboard and audit explorer: views, htmx partials, the JSON API, and commands."""
