# per-file-ignores switches SHD900 off here, for flake8 as for shardlint.
unused = 1  # noqa: SHD999
