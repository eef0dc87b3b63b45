# Columns are code points: the comment starts after two non-ASCII characters.
label = "é😀"  # noqa: SHD999
plain = "ab"  # noqa: SHD998
