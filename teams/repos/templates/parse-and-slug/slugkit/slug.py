def slugify(title):
    """Lower-case a title and join its words with hyphens."""
    return title.strip().lower().replace(" ", "-")
