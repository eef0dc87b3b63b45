"""The normal path of ``form_feed.py``, after page breaks (form feed
lines, as some editors write between sections)."""

from layouts.form_feed import FeedScanImpl







class FeedLayer:
    def __init__(self, heads: int, group) -> None:
        self.impl = FeedScanImpl(heads)
        if self.impl.feed_world_size == -1:
            self.impl.feed_world_size = group.size()
