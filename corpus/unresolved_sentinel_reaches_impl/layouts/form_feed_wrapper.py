"""The normal path of ``form_feed.py``, after page breaks (form feed
lines, as some editors write between sections)."""

from layouts.form_feed import FeedScanImpl







def build_feed_layer(heads: int, group):
    impl = FeedScanImpl(heads)
    if impl.feed_world_size == -1:
        impl.feed_world_size = group.size()
    return impl
