"""Registering a golden set: its items hashed into views, derived views and template marks."""
