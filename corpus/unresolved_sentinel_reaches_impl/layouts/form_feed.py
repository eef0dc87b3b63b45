"""A sentinel whose only resolver sits in a file with a form feed line
(``form_feed_wrapper.py``): the facts count lines as the compiler does."""


class FeedScanImpl:
    def __init__(self, heads: int) -> None:
        self.feed_world_size = -1
        self.heads_per_feed = heads // self.feed_world_size  # error: SHD201
