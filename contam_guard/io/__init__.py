"""Reading and writing: the readers, the sources (folders, git ranges, LFS), the manifest on
disk, atomic writes and safe reads."""
