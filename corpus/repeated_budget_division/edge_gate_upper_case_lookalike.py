"""Gate look-alike in upper case: the shape of a double split, but of a name
that is not a budget under the default options. The text and ast gates let
it through (they cannot see options); the facts gate rejects it."""


def share(BLOCKS_PER_PAGE, DP_SIZE, EP_SIZE):
    return BLOCKS_PER_PAGE // DP_SIZE // EP_SIZE
