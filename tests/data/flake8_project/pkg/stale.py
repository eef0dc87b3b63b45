def scale(width: int) -> int:
    factor = 2  # noqa: SHD997, E501
    return width * factor  # noqa: E501


class Holder:
    size = 4  # noqa: SHD996
