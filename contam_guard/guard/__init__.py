"""The guard of a data repository: what a commit range changed in the guard's own files."""
