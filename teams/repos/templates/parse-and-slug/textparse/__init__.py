from textparse.parser import parse

__all__ = ["parse"]
