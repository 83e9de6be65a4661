def parse(line):
    """Split one comma-separated line into its trimmed fields."""
    fields = line.split(",")
    return [field.strip() for field in fields]
