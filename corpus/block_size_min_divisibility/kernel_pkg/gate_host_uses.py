"""What the facts gate must let through on a host use alone: a division
inside a lambda (the function's scope) and a loop inside a nested function."""


def grid_in_a_lambda(x, out, scale):
    n_rows, n_cols = x.shape
    tile = min(n_cols, 1024)  # error: SHD101
    grid = lambda meta: (n_cols // tile,)  # noqa: E731
    return grid, tile


def nested_helper(x):
    def rows(n):
        step = min(n, 64)  # error: SHD101
        seen = []
        for i in range(0, n, step):
            seen.append(i)
        return seen

    return rows(x.shape[0])
