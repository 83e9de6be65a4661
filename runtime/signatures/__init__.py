"""The failure signatures that `runtime.diagnose` folds: one Fold each, citing its events."""
