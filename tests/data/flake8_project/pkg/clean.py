def identity(value: int) -> int:
    return value
