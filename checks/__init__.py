"""shardlint's rules: one module per rule, named after what it finds.
Modules starting with an underscore hold shared helpers and fact collectors."""
